# Fails on purpose: the message on standard error, exit status 1.
printf '%s\n' 'This tool intentionally returns an error for testing' >&2
exit 1
