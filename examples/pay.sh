#!/bin/sh
# A job handler for `zest create worker payment --handler examples/pay.sh`: reads the job's
# variables (JSON) on stdin and prints the variables to complete the job with.
cat >/dev/null
echo '{"paid": true}'
