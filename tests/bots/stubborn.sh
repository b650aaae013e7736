#!/bin/sh
# Ignores SIGTERM and bye: only SIGKILL ends it.  Answers index 0 to every line
# holding a request id.
trap '' TERM
echo $$ >> "${FAKEBOT_PIDFILE:-/dev/null}"
echo '{"type":"hello","protocol":[1],"name":"stubborn"}'
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"type":"request","id":\([0-9]*\).*/\1/p')
  [ -n "$id" ] && echo "{\"type\":\"decision\",\"id\":$id,\"decision\":0}"
done
# stdin closed or bye: stay anyway
while :; do sleep 1; done
