# Sourced by .ci/run and scripts: select a JDK 25 when the default java is older.
java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
if [ -z "${JAVA_HOME:-}" ] || [ "$(java_major "$JAVA_HOME/bin/java")" != 25 ]; then
  for d in /usr/lib/jvm/temurin-25-jdk* /usr/lib/jvm/java-25* /opt/java/openjdk /opt/jdk-25*; do
    if [ -x "$d/bin/java" ] && [ "$(java_major "$d/bin/java")" = 25 ]; then export JAVA_HOME="$d"; break; fi
  done
fi
if [ -n "${JAVA_HOME:-}" ]; then export PATH="$JAVA_HOME/bin:$PATH"; fi
