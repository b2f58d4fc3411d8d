#!/bin/sh
set -eu
if [ -n "${1:-}" ]; then
	echo "deploying $1"
fi
