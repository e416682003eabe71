# Appends PARAM_LINE to PARAM_FILE (relative to the project), creating its directory.
mkdir -p "$(dirname "$PARAM_FILE")"
printf '%s\n' "$PARAM_LINE" >>"$PARAM_FILE"
printf 'logged to %s\n' "$PARAM_FILE"
