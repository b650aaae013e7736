#!/bin/sh
# Says hello, then never answers (and never reads its stdin).
echo $$ >> "${FAKEBOT_PIDFILE:-/dev/null}"
echo '{"type":"hello","protocol":[1],"name":"silent"}'
exec sleep 86400
