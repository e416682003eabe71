# Prints a numbered report (POSIX sh). Parameters arrive as environment variables
# (PARAM_TITLE, PARAM_COUNT), so their text is never parsed as shell code.
printf '%s\n' "$PARAM_TITLE"
i=1
while [ "$i" -le "$PARAM_COUNT" ]; do
  printf '%d. item %d\n' "$i" "$i"
  i=$((i + 1))
done
