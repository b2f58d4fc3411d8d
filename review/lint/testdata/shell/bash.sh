#!/bin/bash
# Rotates the log of a service.
rotate() {
  local keep=$RANDOM
  if [[ -z $1 ]]; then
    echo "usage: rotate NAME" >&2
    return 1
  fi
  cp "$1.log" "$1.log.$keep" &> /dev/null
  rm -f $1.log
}
rotate "$@"
