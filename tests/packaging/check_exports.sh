#!/bin/sh
# Fails unless every dynamic symbol libencrt.so defines is encrt's own: a C function encrt_*, a
# C++ symbol in namespace encrt, or an object the C++ ABI makes for an encrt class (typeinfo,
# vtable, VTT, thunks, guard variables). Nothing from std::, flatbuffers::, xnn_... may leak.
#   check_exports.sh LIBENCRT.so [NM]
set -eu
lib=$1
nm=${2:-nm}
symbols=$("$nm" -D --defined-only -C "$lib" | sed -E 's/^[0-9a-fA-F]+ [A-Za-z] //')
count=$(printf '%s\n' "$symbols" | grep -c . || true)
bad=$(printf '%s\n' "$symbols" | grep -v -E \
  -e '^encrt_' -e '^encrt::' \
  -e '^(typeinfo|typeinfo name|vtable|VTT|construction vtable|guard variable|TLS init function|TLS wrapper function) for encrt::' \
  -e '^(non-)?virtual thunk to encrt::' || true)
# The check means something only if the API is there.
for want in encrt_model_load encrt_model_load_from_memory encrt_session_run 'encrt::Session::run(' 'encrt::Model::load(' 'encrt::Status::to_string'; do
  if ! printf '%s\n' "$symbols" | grep -q -F -e "$want"; then
    echo "FAIL: $lib does not export $want"
    exit 1
  fi
done
if [ -n "$bad" ]; then
  echo "FAIL: $lib exports symbols outside encrt_* and encrt:: :"
  printf '%s\n' "$bad"
  exit 1
fi
echo "OK: $count dynamic symbols, all encrt_* or encrt::"
