# Prints a numbered report. Parameters arrive as environment variables (PARAM_TITLE,
# PARAM_COUNT), so their text is never parsed as shell code.
printf '%s\n' "$PARAM_TITLE"
for ((i = 1; i <= PARAM_COUNT; i++)); do
  printf '%d. item %d\n' "$i" "$i"
done
