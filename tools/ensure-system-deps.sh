#!/bin/sh
# Installs what the test suite needs from Debian when it is missing and we are root;
# otherwise says exactly what to install.
missing=""
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
command -v prometheus >/dev/null 2>&1 || case "$missing" in *prometheus*) ;; *) missing="$missing prometheus";; esac
command -v prometheus-alertmanager >/dev/null 2>&1 || missing="$missing prometheus-alertmanager"
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
    exit 0
fi
echo "The test suite needs these Debian packages:$missing" >&2
echo "Install them with:  sudo apt-get install -y --no-install-recommends$missing" >&2
exit 1
