#!/bin/sh
# Never says hello.
echo $$ >> "${FAKEBOT_PIDFILE:-/dev/null}"
exec sleep 86400
