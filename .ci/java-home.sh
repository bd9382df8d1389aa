# Sourced (POSIX sh) by ./radixserve, ./mvnw, .ci/run and the scripts: selects a JDK 25 or newer
# when the default one is older, so the README's commands work whatever `java` is first on PATH.
# Order: $JAVA_HOME if it is >= 25; else the `java` on PATH if it is; else the first >= 25 of the
# usual install places. Exports JAVA_HOME and puts its bin first on PATH; with none found it
# changes nothing (./radixserve then says what to install; Maven's enforcer stops the build).
java_major() {
  # the JDK's `release` file when there is one (no JVM start), else `java -version`
  if [ -f "${1%/bin/java}/release" ]; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "${1%/bin/java}/release" | head -1
  else
    "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1
  fi
}
java_at_least_25() { [ -x "$1" ] && [ "$(java_major "$1")" -ge 25 ] 2>/dev/null; }
if ! { [ -n "${JAVA_HOME:-}" ] && java_at_least_25 "$JAVA_HOME/bin/java"; }; then
  _rs_path_java=$(command -v java 2>/dev/null || true)
  if [ -n "$_rs_path_java" ] && java_at_least_25 "$_rs_path_java"; then
    # the PATH's java: its home is two levels above the real binary
    _rs_path_java=$(readlink -f "$_rs_path_java" 2>/dev/null || echo "$_rs_path_java")
    export JAVA_HOME="${_rs_path_java%/bin/java}"
  else
    for _rs_d in /usr/lib/jvm/temurin-25-jdk* /usr/lib/jvm/java-25* /usr/lib/jvm/* \
        /opt/java/openjdk /opt/jdk-2* "${HOME:-/nonexistent}"/.sdkman/candidates/java/* \
        "${HOME:-/nonexistent}"/.jdks/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
      if java_at_least_25 "$_rs_d/bin/java"; then export JAVA_HOME="$_rs_d"; break; fi
    done
  fi
  unset _rs_path_java _rs_d
fi
if [ -n "${JAVA_HOME:-}" ] && java_at_least_25 "$JAVA_HOME/bin/java"; then
  export PATH="$JAVA_HOME/bin:$PATH"
fi
