#!/usr/bin/env bash
# The envcheck GitHub Action's step (action.yml). Its inputs arrive as INPUT_* variables, as
# the runner sets them; it runs the same way by hand:
#   INPUT_ARGS="--no-deep" INPUT_FAIL_ON=warning bash action/run.sh
# envcheck is installed into a private venv under $RUNNER_TEMP (nothing goes into the job's
# environment) and checks the interpreter INPUT_PYTHON names. Under GitHub Actions envcheck
# itself writes the annotations and appends the step summary. Exit: envcheck's exit code.
set -uo pipefail

fail() {  # one annotation and a usage exit (2), as envcheck's own usage errors
  echo "::error title=envcheck action::$1"
  echo "verdict=error" >>"${GITHUB_OUTPUT:-/dev/null}"
  echo "exit-code=$2" >>"${GITHUB_OUTPUT:-/dev/null}"
  exit "$2"
}

python=${INPUT_PYTHON:-python3}
action_path=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
version=${INPUT_VERSION:-action}

case "${INPUT_FAIL_ON:-error}" in
  error) strict=() ;;
  warning) strict=(--strict) ;;
  *) fail "fail-on must be 'error' or 'warning', not '${INPUT_FAIL_ON}'" 2 ;;
esac

interpreter=$(command -v "$python" 2>/dev/null) || fail "python '$python' was not found" 2
tool=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/envcheck.XXXXXX")
"$interpreter" -m venv "$tool/venv" >/dev/null 2>&1 \
  || fail "could not make a virtual environment with $interpreter (python3-venv missing?)" 3
bin="$tool/venv/bin"
[ -d "$bin" ] || bin="$tool/venv/Scripts"  # Windows runners
if [ "$version" = action ]; then spec=$action_path; else spec="torch-envcheck==$version"; fi
"$bin/python" -m pip install -q --disable-pip-version-check "$spec" \
  || fail "could not install envcheck ($spec)" 3

# split on spaces and newlines (a YAML block `args: |`), never glob-expanded
read -r -a args <<<"$(printf '%s' "${INPUT_ARGS:-}" | tr '\n' ' ')"
[ -n "${INPUT_JUNIT:-}" ] && args+=(--junit "$INPUT_JUNIT")
[ -n "${INPUT_HTML_REPORT:-}" ] && args+=(--html "$INPUT_HTML_REPORT")

echo "envcheck check --python $interpreter ${strict[*]+${strict[*]}} ${args[*]+${args[*]}}"
"$bin/envcheck" check --python "$interpreter" ${strict[@]+"${strict[@]}"} ${args[@]+"${args[@]}"}
code=$?
case $code in
  0) verdict=ready ;;
  1) verdict=not-ready ;;
  *) verdict=error ;;
esac
echo "verdict=$verdict" >>"${GITHUB_OUTPUT:-/dev/null}"
echo "exit-code=$code" >>"${GITHUB_OUTPUT:-/dev/null}"
exit "$code"
