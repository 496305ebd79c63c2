#!/usr/bin/env bash
# Reproduces the JUnit reports under fixtures/: each real test runner runs its sample project in
# fixtures/<runner>/project and the report it writes is committed beside it, with runs.json
# recording the command, the runner's version and its exit code.
#
# Run it once by hand when a runner changes; `npm test` never needs it (or any apt package).
# `generate-fixtures.sh variants` reruns only the runner-configuration variants (jest-junit without
# stack traces or with title templates, mocha's xunit reporter, node 20's escaping, pytest's
# non-ASCII ids and teardown errors): they need node, npm and python3-pytest only.
# `generate-fixtures.sh new-module` reruns only the project-new-module runs (a RED that meets a
# module or an export the architecture declares and nobody wrote yet, an undeclared one, and the
# assertion wrappers around them) of vitest, node, jest, mocha and pytest. PYTHON=... picks the
# python whose pytest runs (default /usr/bin/python3).
# `generate-fixtures.sh jest` reruns only jest's default runs; `generate-fixtures.sh own-file` reruns only the projects-own-file runs (a test list's file that
# did not run or load while another file has a test of the same title), with the same needs.
# Needs, as root on Debian 12:
#   apt-get update && apt-get install -y golang-go gotestsum python3-pytest maven \
#     libsurefire-java junit4 libmaven-compiler-plugin-java libmaven-resources-plugin-java
# jest, jest-junit, mocha and mocha-junit-reporter are installed into $JUNIT_GEN (a temp folder,
# never this project's node_modules). vitest and node come with the project.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
FIXTURES="$HERE/fixtures"
REPO="$(cd "$HERE/../../.." && pwd)"
JUNIT_GEN="${JUNIT_GEN:-/tmp/junit-gen}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

need() { command -v "$1" >/dev/null || { echo "missing $1: $2" >&2; exit 1; }; }
MODE="${1:-all}"
need node "Node 20 or later"
if [ "$MODE" = all ]; then
  need go "apt-get install golang-go"
  need gotestsum "apt-get install gotestsum"
  need mvn "apt-get install maven libsurefire-java junit4 libmaven-compiler-plugin-java libmaven-resources-plugin-java"
fi
# Debian's python3 by default; PYTHON names another one that has pytest.
PYTHON="${PYTHON:-/usr/bin/python3}"
"$PYTHON" -m pytest --version >/dev/null 2>&1 || { echo "missing pytest: apt-get install python3-pytest (or PYTHON=<a python with pytest>)" >&2; exit 1; }

if [ ! -x "$JUNIT_GEN/node_modules/.bin/jest" ] || [ ! -x "$JUNIT_GEN/node_modules/.bin/mocha" ]; then
  mkdir -p "$JUNIT_GEN"
  (cd "$JUNIT_GEN" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    # mocha-junit-reporter 2.2 cannot construct mocha 12's class-based reporters: stay on mocha 11.
    npm install --no-audit --no-fund jest@30 jest-junit@17 mocha@11 mocha-junit-reporter@2 >/dev/null)
fi

# run NAME REPORT_NAME VERSION CWD -- COMMAND...: runs COMMAND in CWD (it must write $OUT/report.xml),
# copies the report to fixtures/NAME/REPORT_NAME and appends a line to $OUT/NAME.runs.
run() {
  local name="$1" report="$2" version="$3" cwd="$4"
  shift 5
  rm -f "$OUT/report.xml"
  local code=0
  (cd "$cwd" && "$@") >"$OUT/$name-$report.log" 2>&1 || code=$?
  local written=false
  if [ -f "$OUT/report.xml" ]; then
    cp "$OUT/report.xml" "$FIXTURES/$name/$report"
    written=true
  else
    rm -f "$FIXTURES/$name/$report"
  fi
  node -e '
    const [out, file, report, version, code, written, ...command] = process.argv.slice(1);
    require("node:fs").appendFileSync(file, JSON.stringify({ report, written: written === "true",
      version, exitCode: Number(code), command: command.join(" ").split(out).join("$OUT") }) + "\n");
  ' "$OUT" "$OUT/$name.runs" "$report" "$version" "$code" "$written" "$@"
  echo "$name/$report: exit $code, report written: $written" >&2
}

# finish NAME: records this run's lines in fixtures/NAME/runs.json, replacing the runs of the same
# reports and keeping the others (so `variants` leaves the default runs' records as they were).
finish() {
  local name="$1"
  node -e '
    const fs = require("node:fs");
    const [from, to] = process.argv.slice(1);
    const fresh = fs.readFileSync(from, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const old = fs.existsSync(to) ? JSON.parse(fs.readFileSync(to, "utf8")).runs : [];
    const replaced = new Set(fresh.map((run) => run.report));
    const runs = [...old.filter((run) => !replaced.has(run.report)), ...fresh];
    fs.writeFileSync(to, JSON.stringify({ runs }, null, 2) + "\n");
  ' "$OUT/$name.runs" "$FIXTURES/$name/runs.json"
}

JEST_VERSION="jest $("$JUNIT_GEN/node_modules/.bin/jest" --version), jest-junit $(node -p "require('$JUNIT_GEN/node_modules/jest-junit/package.json').version")"
MOCHA_VERSION="mocha $("$JUNIT_GEN/node_modules/.bin/mocha" --version), mocha-junit-reporter $(node -p "require('$JUNIT_GEN/node_modules/mocha-junit-reporter/package.json').version")"
PYTEST_VERSION="$("$PYTHON" -m pytest --version 2>&1 | head -1)"
PYTEST=(env PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -m pytest -p no:cacheprovider --junitxml="$OUT/report.xml")

# jest-junit as a cycle runs it: the cycle sets JEST_JUNIT_ADD_FILE_ATTRIBUTE=true for the test
# command (src/contracts/runners.ts, REPORTER_ENV), so each test case carries its file.
JEST_AS_CYCLE=(env JEST_JUNIT_ADD_FILE_ATTRIBUTE=true)

# The settings teams change that change the report's shape, each on the same sample project.
variants() {
  local JEST=("${JEST_AS_CYCLE[@]}" "$JUNIT_GEN/node_modules/.bin/jest" --ci --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit")
  # jest-junit's noStackTrace: the failure is the bare message, with no "Error:" and no type.
  run jest report-no-stack-trace.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_JUNIT_NO_STACK_TRACE=true "${JEST[@]}"
  # Title templates: the name is the bare title and the describe blocks go to the classname...
  run jest report-title-template.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_JUNIT_CLASSNAME="{classname}" \
    JEST_JUNIT_TITLE="{title}" "${JEST[@]}"
  # ...or the bare title as the name, with the classname left at its default (blocks and title).
  run jest report-title-only.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_JUNIT_TITLE="{title}" "${JEST[@]}"
  # ...or the blocks as the classname joined by " > " (ancestorSeparator), as the README's example.
  run jest report-title-template-separator.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_JUNIT_CLASSNAME="{classname}" \
    JEST_JUNIT_TITLE="{title}" JEST_JUNIT_ANCESTOR_SEPARATOR=" > " "${JEST[@]}"
  finish jest
  # mocha's own xunit reporter (no extra package): one <testsuite>, the blocks as the classname,
  # failures with no type and the message before the stack.
  run mocha report-xunit.xml "mocha $("$JUNIT_GEN/node_modules/.bin/mocha" --version), built-in xunit reporter" \
    "$FIXTURES/mocha/project" -- "$JUNIT_GEN/node_modules/.bin/mocha" --reporter xunit \
    --reporter-options output="$OUT/report.xml" test/cart.test.js test/stock.test.js
  finish mocha
  # node 20's junit reporter escapes a quote in a title twice (&amp;quot;).
  run node report-quotes.xml "node $(node --version)" "$FIXTURES/node/project-quotes" -- \
    node --test --test-reporter=junit --test-reporter-destination="$OUT/report.xml"
  finish node
  # pytest's non-ASCII parameter ids (Größe as Gr\xf6\xdfe) and a fixture whose teardown raises.
  run pytest report-variants.xml "$PYTEST_VERSION" "$FIXTURES/pytest/project-variants" -- "${PYTEST[@]}"
  finish pytest
}

# A test list's file that did not run or did not load while another file has a test of the same
# title (a copy failing by assertion for RED, one passing for GREEN): each runner's report, so the
# tests see what each says of the copy's file (test/security/own-file.test.ts).
own_file() {
  local P
  for step in red green; do
    P="$FIXTURES/vitest/project-own-file"
    run vitest "report-own-file-$step.xml" "$("$REPO/node_modules/.bin/vitest" --version | awk '{print $1}')" "$P" -- \
      "$REPO/node_modules/.bin/vitest" run --reporter=junit --outputFile="$OUT/report.xml" "test/copy-$step.test.js"
    P="$FIXTURES/node/project-own-file"
    run node "report-own-file-$step.xml" "node $(node --version)" "$P" -- \
      node --test --test-reporter=junit --test-reporter-destination="$OUT/report.xml" "test/copy-$step.test.js"
    # jest: the entry's file does not load; as a cycle runs it (a file attribute), and with
    # jest-junit's defaults (no file, and the file that did not load dropped). The paths go
    # before --reporters, which would take them as reporters.
    P="$FIXTURES/jest/project-own-file"
    run jest "report-own-file-$step.xml" "$JEST_VERSION" "$P" -- \
      env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml "${JEST_AS_CYCLE[@]}" \
      "$JUNIT_GEN/node_modules/.bin/jest" test/cart.test.cjs "test/copy-$step.test.cjs" --ci \
      --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit"
    run jest "report-own-file-$step-no-file.xml" "$JEST_VERSION" "$P" -- \
      env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml \
      "$JUNIT_GEN/node_modules/.bin/jest" test/cart.test.cjs "test/copy-$step.test.cjs" --ci \
      --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit"
    # mocha: the copy is it.only; mocha-junit-reporter (no file for a top-level test) and xunit.
    P="$FIXTURES/mocha/project-own-file"
    run mocha "report-own-file-$step.xml" "$MOCHA_VERSION" "$P" -- \
      env MOCHA_FILE="$OUT/report.xml" "$JUNIT_GEN/node_modules/.bin/mocha" \
      --reporter "$JUNIT_GEN/node_modules/mocha-junit-reporter" --reporter-options includePending=true \
      test/cart.test.js "test/copy-$step.test.js"
    run mocha "report-own-file-$step-xunit.xml" "mocha $("$JUNIT_GEN/node_modules/.bin/mocha" --version), built-in xunit reporter" "$P" -- \
      "$JUNIT_GEN/node_modules/.bin/mocha" --reporter xunit --reporter-options output="$OUT/report.xml" \
      test/cart.test.js "test/copy-$step.test.js"
    P="$FIXTURES/pytest/project-own-file"
    run pytest "report-own-file-$step.xml" "$PYTEST_VERSION" "$P" -- "${PYTEST[@]}" "tests/test_copy_$step.py"
  done
  finish vitest
  finish node
  finish jest
  finish mocha
  finish pytest
}
jest_runs() {
  # jest with jest-junit: first as a cycle runs it (its defaults, and the file attribute the cycle sets),
  # then with a failed suite reported instead of dropped and the suite named by its file.
  run jest report.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml "${JEST_AS_CYCLE[@]}" \
    "$JUNIT_GEN/node_modules/.bin/jest" --ci --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit"
  run jest report-with-file-and-suite-errors.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_JUNIT_ADD_FILE_ATTRIBUTE=true \
    JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true JEST_JUNIT_SUITE_NAME="{filepath}" \
    "$JUNIT_GEN/node_modules/.bin/jest" --ci --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit"
  # A report titled by the project (jest-junit's suiteName): no "jest tests" mark left.
  run jest report-custom-suite-name.xml "$JEST_VERSION" "$FIXTURES/jest/project" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_SUITE_NAME="shop tests" "${JEST_AS_CYCLE[@]}" \
    "$JUNIT_GEN/node_modules/.bin/jest" --ci --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit"
  finish jest
}
if [ "$MODE" = variants ]; then
  variants
  exit 0
fi
if [ "$MODE" = jest ]; then
  jest_runs
  exit 0
fi
if [ "$MODE" = own-file ]; then
  own_file
  exit 0
fi

# A new module's first RED, per runner: each project declares src/pricing (absent) and
# src/discounts (present, one declared export missing); src/tax is declared nowhere.
new_module() {
  local VITEST="$REPO/node_modules/.bin/vitest"
  run vitest report-new-module.xml "$("$VITEST" --version | awk '{print $1}')" "$FIXTURES/vitest/project-new-module" -- \
    "$VITEST" run --reporter=junit --outputFile="$OUT/report.xml"
  finish vitest
  run node report-new-module.xml "node $(node --version)" "$FIXTURES/node/project-new-module" -- \
    node --test --test-reporter=junit --test-reporter-destination="$OUT/report.xml"
  finish node
  # The settings the README recommends: without them a file that fails to load leaves no trace.
  run jest report-new-module.xml "$JEST_VERSION" "$FIXTURES/jest/project-new-module" -- \
    env JEST_JUNIT_OUTPUT_DIR="$OUT" JEST_JUNIT_OUTPUT_NAME=report.xml JEST_JUNIT_ADD_FILE_ATTRIBUTE=true \
    JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true JEST_JUNIT_SUITE_NAME="{filepath}" \
    "$JUNIT_GEN/node_modules/.bin/jest" --ci --reporters=default --reporters="$JUNIT_GEN/node_modules/jest-junit"
  finish jest
  # A static import of a missing module aborts mocha's whole run before the reporter writes
  # anything (recorded: no report); the files that import inside their tests report.
  local MOCHA=("$JUNIT_GEN/node_modules/.bin/mocha" --reporter "$JUNIT_GEN/node_modules/mocha-junit-reporter")
  run mocha report-new-module-static.xml "$MOCHA_VERSION" "$FIXTURES/mocha/project-new-module" -- \
    env MOCHA_FILE="$OUT/report.xml" "${MOCHA[@]}" "test/**/*.test.js"
  run mocha report-new-module.xml "$MOCHA_VERSION" "$FIXTURES/mocha/project-new-module" -- \
    env MOCHA_FILE="$OUT/report.xml" "${MOCHA[@]}" test/namespace.test.js test/dynamic.test.js test/wrappers.test.js
  finish mocha
  run pytest report-new-module.xml "$PYTEST_VERSION" "$FIXTURES/pytest/project-new-module" -- \
    "${PYTEST[@]}" --continue-on-collection-errors
  finish pytest
}
if [ "$MODE" = new-module ]; then
  new_module
  exit 0
fi

# vitest: the project's own, with its junit reporter.
V="$FIXTURES/vitest/project"
run vitest report.xml "$("$REPO/node_modules/.bin/vitest" --version | awk '{print $1}')" "$V" -- \
  "$REPO/node_modules/.bin/vitest" run --reporter=junit --outputFile="$OUT/report.xml"
# A run that fails on an unhandled rejection while every test passes: the report shows no failure.
run vitest report-unhandled-rejection.xml "$("$REPO/node_modules/.bin/vitest" --version | awk '{print $1}')" "$FIXTURES/vitest/project-unhandled" -- \
  "$REPO/node_modules/.bin/vitest" run --reporter=junit --outputFile="$OUT/report.xml"
finish vitest

# node's own test runner, with its junit reporter.
run node report.xml "node $(node --version)" "$FIXTURES/node/project" -- \
  node --test --test-reporter=junit --test-reporter-destination="$OUT/report.xml"
finish node

jest_runs

# mocha with mocha-junit-reporter. A file that fails to import aborts mocha's whole run before the
# reporter writes anything, so the full run leaves no report; the other runs leave the broken
# file out. By default the reporter drops pending (skipped) tests; includePending keeps them.
MOCHA=("$JUNIT_GEN/node_modules/.bin/mocha" --reporter "$JUNIT_GEN/node_modules/mocha-junit-reporter")
run mocha report-with-broken-file.xml "$MOCHA_VERSION" "$FIXTURES/mocha/project" -- \
  env MOCHA_FILE="$OUT/report.xml" "${MOCHA[@]}" "test/**/*.test.js"
run mocha report.xml "$MOCHA_VERSION" "$FIXTURES/mocha/project" -- \
  env MOCHA_FILE="$OUT/report.xml" "${MOCHA[@]}" test/cart.test.js test/stock.test.js
run mocha report-include-pending.xml "$MOCHA_VERSION" "$FIXTURES/mocha/project" -- \
  env MOCHA_FILE="$OUT/report.xml" "${MOCHA[@]}" --reporter-options includePending=true test/cart.test.js test/stock.test.js
finish mocha

# pytest (Debian's): by default a collection error interrupts the session, so the tests of the
# files that did import never run and are missing; --continue-on-collection-errors runs them.
run pytest report.xml "$PYTEST_VERSION" "$FIXTURES/pytest/project" -- "${PYTEST[@]}"
run pytest report-continue-on-collection-errors.xml "$PYTEST_VERSION" "$FIXTURES/pytest/project" -- \
  "${PYTEST[@]}" --continue-on-collection-errors
finish pytest

# Go (Debian's golang-go) through gotestsum (Debian's), offline. A package that fails to compile
# appears only in the errors count of <testsuites>; a panic ends the test binary.
GO_ENV=(env GOCACHE="$JUNIT_GEN/gocache" GOPATH="$JUNIT_GEN/gopath" GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local)
run go report.xml "$(go version | awk '{print $3}' || true), gotestsum $(dpkg-query -W -f='${Version}' gotestsum 2>/dev/null || echo unknown)" \
  "$FIXTURES/go/project" -- "${GO_ENV[@]}" gotestsum --junitfile "$OUT/report.xml" --format standard-verbose ./...
finish go

# Maven Surefire (Debian's maven and packaged plugins), offline against /usr/share/maven-repo.
# Surefire writes one TEST-<class>.xml per test class. A test class that does not compile stops
# the build before Surefire runs: that run writes no report at all (recorded, not faked).
S="$FIXTURES/surefire/project"
MVN=(mvn -o -q -B -Dmaven.repo.local=/usr/share/maven-repo)
SUREFIRE_VERSION="surefire 2.22.3, $(mvn -v 2>/dev/null | sed -n '1s/\x1b\[[0-9;]*m//gp')"
rm -rf "$S/target"
code=0
(cd "$S" && "${MVN[@]}" test) >"$OUT/surefire.log" 2>&1 || code=$?
rm -rf "$FIXTURES/surefire/reports" && mkdir -p "$FIXTURES/surefire/reports"
cp "$S"/target/surefire-reports/TEST-*.xml "$FIXTURES/surefire/reports/"
rm -rf "$S/target"
echo "surefire: exit $code" >&2
# The same on JUnit 5 (Debian's junit5), through Surefire's junit-platform provider.
S5="$FIXTURES/surefire/project-junit5"
rm -rf "$S5/target"
code5=0
(cd "$S5" && "${MVN[@]}" test) >"$OUT/surefire-junit5.log" 2>&1 || code5=$?
rm -rf "$FIXTURES/surefire/reports-junit5" && mkdir -p "$FIXTURES/surefire/reports-junit5"
cp "$S5"/target/surefire-reports/TEST-*.xml "$FIXTURES/surefire/reports-junit5/"
rm -rf "$S5/target"
echo "surefire on JUnit 5: exit $code5" >&2
COMPILE="$OUT/surefire-compile-failure"
cp -r "$S" "$COMPILE"
cat >"$COMPILE/src/test/java/shop/CheckoutTest.java" <<'EOF'
package shop;

import org.junit.Test;

public class CheckoutTest {
  @Test
  public void paysByCard() {
    Cart.checkout(); // does not compile: there is no checkout method
  }
}
EOF
compile_code=0
(cd "$COMPILE" && "${MVN[@]}" test) >"$OUT/surefire-compile.log" 2>&1 || compile_code=$?
compile_reports=$(find "$COMPILE/target" -path "*surefire-reports*" -name "*.xml" 2>/dev/null | wc -l || true)
node -e '
  const [to, version, code, compileCode, compileReports, reportsDir, code5, reports5Dir] = process.argv.slice(1);
  const fs = require("node:fs");
  const runs = [
    { report: "reports/", written: true, version, exitCode: Number(code), command: "mvn -o -q -B -Dmaven.repo.local=/usr/share/maven-repo test",
      reports: fs.readdirSync(reportsDir).sort() },
    { report: "reports-junit5/", written: true, version: version + ", JUnit 5", exitCode: Number(code5),
      command: "mvn -o -q -B -Dmaven.repo.local=/usr/share/maven-repo test (in project-junit5)", reports: fs.readdirSync(reports5Dir).sort() },
    { report: "(none: a test class that does not compile)", written: Number(compileReports) > 0, version,
      exitCode: Number(compileCode), command: "mvn -o -q -B -Dmaven.repo.local=/usr/share/maven-repo test, with CheckoutTest.java calling a missing method" },
  ];
  fs.writeFileSync(to, JSON.stringify({ runs }, null, 2) + "\n");
' "$FIXTURES/surefire/runs.json" "$SUREFIRE_VERSION" "$code" "$compile_code" "$compile_reports" "$FIXTURES/surefire/reports" "$code5" "$FIXTURES/surefire/reports-junit5"
echo "surefire with a compile error: exit $compile_code, reports written: $compile_reports" >&2
# The configuration variants, on the projects above, and the own-file runs.
variants
own_file
