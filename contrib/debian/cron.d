# /etc/cron.d/autorepair, from the autorepair package: not active until you remove the "#" from
# the line below. Choose this OR the systemd timer (systemctl enable --now autorepair.timer),
# on one host only, after `autorepair run --dry-run` shows what it would do.
# The documented version of this file: /usr/share/doc/autorepair/examples/cron.d/autorepair.

SHELL=/bin/sh
MAILTO=""
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

#*/5 * * * * root command -v autorepair >/dev/null && { autorepair run --config /etc/autorepair/autorepair.toml || echo "exit status $?"; } 2>&1 | logger -t autorepair -p daemon.info
