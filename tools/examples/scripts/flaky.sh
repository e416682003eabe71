# Fails (exit 1) while PARAM_ATTEMPT < PARAM_SUCCEED_ON; then prints JSON.
if [ "$PARAM_ATTEMPT" -lt "$PARAM_SUCCEED_ON" ]; then
  printf 'attempt %s failed\n' "$PARAM_ATTEMPT" >&2
  exit 1
fi
printf '{"attempt": %s}\n' "$PARAM_ATTEMPT"
