#!/bin/sh
# Starts a child and a grandchild that keep its stdout open, answers nothing and
# exits after its hello: the referee must see the exit (not wait for EOF) and end
# the children.
echo $$ >> "$FAKEBOT_PIDFILE"
sleep 600 & echo $! >> "$FAKEBOT_PIDFILE"
sh -c 'sleep 600 & echo $! >> "$FAKEBOT_PIDFILE"; wait' & echo $! >> "$FAKEBOT_PIDFILE"
echo '{"type":"hello","protocol":[1],"name":"orphans"}'
read line   # welcome
read line   # new_game
read line   # the first request
exit 5
