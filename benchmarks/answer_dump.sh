#!/usr/bin/env bash
# The 1M answer dump (issue 17): a fixed set of reads, each with --json, written to
# OUT/<name>.json with its exit code in OUT/<name>.rc, so two code versions (or the
# read model on and off) can be compared with `cmp`.
#
# usage: benchmarks/answer_dump.sh SRC OUT CACHE [STORE]
#   SRC    a source tree holding kgai_tui/ (a `git archive` snapshot)
#   OUT    where the answers go
#   CACHE  the KGAI_TUI_CACHE_DIR to use (empty at the start for a cold run)
#   STORE  default /tmp/kgeng/kg1m (kgai-tui bench generate DIR --decisions 1000000)
set -u
src=$1; out=$2; cache=$3; store=${4:-/tmp/kgeng/kg1m}
python=${PYTHON:-python}
mkdir -p "$out"
export KGAI_TUI_CACHE_DIR=$cache PYTHONHASHSEED=0
run() {
    name=$1; shift
    (cd "$src" && PYTHONPATH="$src" "$python" -m kgai_tui "$@" --store "$store" --json) \
        > "$out/$name.json" 2> "$out/$name.err"
    echo "$?" > "$out/$name.rc"
}
run status status
run heads heads
run conflicts conflicts
run conflicts-about conflicts --about E000777
for e in E000123 E000777 E004242 E009999 E000001; do run "history-$e" history "feature:$e"; done
run history-missing history "feature:Nope"
run resolve-E000123 resolve "feature:E000123"
run resolve-E005000 resolve "feature:E005000"
run context-about1 context --about "reshape E000777"
run context-about2 context --about "bench decision reshape"
run context-about3 context --about "E004242"
run context-paths context --paths "src/**"
run asof-20 as-of 2026-01-03T07:33:20Z
run asof-60 as-of 2026-01-07T22:39:59Z
run asof-100 as-of 2026-01-12T13:46:39Z
run asof-start as-of 2026-01-01T00:00:00Z
run asof-late as-of 2026-01-12T23:59:59Z
run asof-future as-of 2027-01-01
run search1 search "reshape E000777"
run search2 search "bench decision"
run search3 search "author:igen000000000003 reshape"
run search-all1 search --all "reshape E000777"
run search-all2 search --all "decision"
run export export --canonical
run diff diff 2026-01-03 2026-01-05
run doctor doctor
