#!/bin/bash
# The image's HEALTHCHECK: GET /health on the port the server was configured with
# (RADIXSERVE_PORT, which the image sets and which outranks the config file) and exit 0 on
# HTTP 200. bash's /dev/tcp keeps curl and its libraries out of the image.
host=${RADIXSERVE_HOST:-0.0.0.0}
case $host in 0.0.0.0 | :: | "") host=127.0.0.1 ;; esac
exec 3<>"/dev/tcp/$host/${RADIXSERVE_PORT:-8000}" || exit 1
printf 'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
IFS= read -r -t 3 status <&3 && [[ $status == "HTTP/1.1 200 "* ]]
