#!/bin/sh
set -e
target=$1
if [ $target == "prod" ]; then
  rm -rf $DIR/*
fi
echo done
