#!/bin/sh
# w3m_preload.sh LIBSGC
#
# A real bdwgc client: Debian's w3m links libgc.so.1.  Render a large
# generated HTML page (nested tables, lists, many links, entities) with
# `w3m -dump`, once with bdwgc and once with LIBSGC preloaded in its place,
# and require byte-identical output.  Also require that sgc really served
# the allocations: the dynamic linker must bind w3m's GC_malloc to LIBSGC
# (LD_DEBUG=bindings), and SGC_STATS=1 must make sgc print its "sgc:"
# summary on stderr at exit.
#
# Exit 77 (ctest SKIP_RETURN_CODE) if w3m is not installed.
# W3M_PAGE_MB (default 8) sets the approximate page size.
set -u
LIB=${1:?usage: w3m_preload.sh /path/to/libsgc.so}
W3M=$(command -v w3m 2>/dev/null || true)
if [ -z "$W3M" ]; then
    echo "[w3m_preload] SKIP: w3m is not installed"
    exit 77
fi
[ -f "$LIB" ] || { echo "FAIL [w3m_preload] no library at $LIB"; exit 1; }
case "$LIB" in /*) ;; *) LIB="$(pwd)/$LIB" ;; esac

MB=${W3M_PAGE_MB:-8}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/w3mtest.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
PAGE="$TMP/page.html"

# ---- generate the page (awk: deterministic for a given awk) -------------
awk -v target_mb="$MB" 'BEGIN {
    srand(12345);
    target = target_mb * 1024 * 1024;
    n = split("alpha beta gamma delta epsilon zeta eta theta iota kappa " \
              "lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi " \
              "omega garbage collector conservative mark sweep heap page " \
              "thread parallel", words, " ");
    ne = split("&amp; &lt; &gt; &quot; &eacute; &Eacute; &auml; &ouml; " \
               "&szlig; &copy; &reg; &nbsp; &mdash; &ndash; &hellip; " \
               "&#x263A; &#9731; &#169; &laquo; &raquo; &euro; &pound;", \
               ents, " ");
    print "<!DOCTYPE html>";
    print "<html><head><meta charset=\"utf-8\"><title>sgc w3m test page</title></head><body>";
    print "<h1>Generated page for the sgc preload test</h1>";
    size = 0; sec = 0;
    while (size < target) {
        sec++;
        line = sprintf("<h2 id=\"s%d\">Section %d &mdash; %s</h2>", sec, sec, words[int(rand()*n)+1]);
        print line; size += length(line);
        # paragraph with links and entities
        line = "<p>";
        for (i = 0; i < 60; i++) {
            w = words[int(rand()*n)+1];
            r = rand();
            if (r < 0.15) w = sprintf("<a href=\"http://example.org/%s/%d.html#f%d\">%s</a>", w, sec, i, w);
            else if (r < 0.25) w = w " " ents[int(rand()*ne)+1];
            else if (r < 0.30) w = "<b>" w "</b>";
            else if (r < 0.35) w = "<i>" w "</i>";
            line = line w " ";
        }
        line = line "</p>";
        print line; size += length(line);
        # nested list
        print "<ul>"; size += 4;
        for (i = 0; i < 8; i++) {
            line = sprintf("<li>item %d.%d %s<ol>", sec, i, words[int(rand()*n)+1]);
            for (j = 0; j < 4; j++)
                line = line sprintf("<li><a href=\"#s%d\">back to %d</a> %s</li>", int(rand()*sec)+1, sec, ents[int(rand()*ne)+1]);
            line = line "</ol></li>";
            print line; size += length(line);
        }
        print "</ul>"; size += 5;
        # nested tables, every other section
        if (sec % 2 == 0) {
            rows = 6 + int(rand()*10); cols = 3 + int(rand()*4);
            print "<table border=\"1\" cellpadding=\"2\">"; size += 40;
            for (r = 0; r < rows; r++) {
                line = "<tr>";
                for (c = 0; c < cols; c++) {
                    if ((r + c) % 5 == 0) {
                        cell = "<table border=\"1\"><tr><th>k</th><th>v</th></tr>";
                        for (k = 0; k < 3; k++)
                            cell = cell sprintf("<tr><td>%s</td><td align=\"right\">%d</td></tr>", words[int(rand()*n)+1], int(rand()*100000));
                        cell = cell "</table>";
                    } else {
                        cell = sprintf("%s %s <a href=\"/t/%d/%d/%d\">%d</a>", words[int(rand()*n)+1], ents[int(rand()*ne)+1], sec, r, c, r*c);
                    }
                    line = line "<td>" cell "</td>";
                }
                line = line "</tr>";
                print line; size += length(line);
            }
            print "</table>"; size += 8;
        }
        if (sec % 7 == 0) {
            line = "<pre>";
            for (i = 0; i < 10; i++)
                line = line sprintf("%8d  %-12s  %s\n", i * sec, words[int(rand()*n)+1], ents[int(rand()*ne)+1]);
            line = line "</pre>";
            print line; size += length(line);
        }
    }
    print "</body></html>";
}' >"$PAGE" || { echo "FAIL [w3m_preload] could not generate the page"; exit 1; }
echo "[w3m_preload] page: $(wc -c <"$PAGE") bytes"

# w3m reads/writes ~/.w3m: give it a private HOME so runs are identical.
export HOME="$TMP/home"
mkdir -p "$HOME"
W3M_ARGS="-dump -T text/html -cols 132 -I UTF-8 -O UTF-8 -o display_link_number=1"

# Peak memory (GNU time, if installed): sgc may use more than bdwgc, but
# not wildly more (limit: 2 x bdwgc + 64 MiB).
TIME_B=""
TIME_S=""
if [ -x /usr/bin/time ]; then
    TIME_B="/usr/bin/time -q -f %M -o $TMP/rss.bdwgc"
    TIME_S="/usr/bin/time -q -f %M -o $TMP/rss.sgc"
fi

t0=$(date +%s.%N)
# shellcheck disable=SC2086
$TIME_B "$W3M" $W3M_ARGS "$PAGE" >"$TMP/out.bdwgc" 2>"$TMP/err.bdwgc"
rc_b=$?
t1=$(date +%s.%N)
# shellcheck disable=SC2086
$TIME_S env LD_PRELOAD="$LIB" SGC_STATS=1 "$W3M" $W3M_ARGS "$PAGE" >"$TMP/out.sgc" 2>"$TMP/err.sgc"
rc_s=$?
t2=$(date +%s.%N)
echo "[w3m_preload] bdwgc: exit $rc_b, $(wc -c <"$TMP/out.bdwgc") bytes, $(echo "$t1 - $t0" | bc 2>/dev/null || echo '?') s"
echo "[w3m_preload] sgc:   exit $rc_s, $(wc -c <"$TMP/out.sgc") bytes, $(echo "$t2 - $t1" | bc 2>/dev/null || echo '?') s"

status=0
if [ $rc_b -ne 0 ]; then
    echo "FAIL [w3m_preload] w3m with bdwgc failed (exit $rc_b):"
    head -c 2000 "$TMP/err.bdwgc"
    exit 1
fi
if [ $rc_s -ne 0 ]; then
    echo "FAIL [w3m_preload] w3m with sgc preloaded failed (exit $rc_s); stderr:"
    tail -c 3000 "$TMP/err.sgc"
    status=1
fi
if [ "$(wc -c <"$TMP/out.bdwgc")" -lt 100000 ]; then
    echo "FAIL [w3m_preload] suspiciously small w3m output with bdwgc"
    status=1
fi
if ! cmp -s "$TMP/out.bdwgc" "$TMP/out.sgc"; then
    echo "FAIL [w3m_preload] output differs between bdwgc and sgc:"
    cmp "$TMP/out.bdwgc" "$TMP/out.sgc" | head -3
    diff "$TMP/out.bdwgc" "$TMP/out.sgc" | head -20
    status=1
fi

if [ -s "$TMP/rss.bdwgc" ] && [ -s "$TMP/rss.sgc" ]; then
    rb=$(tail -n 1 "$TMP/rss.bdwgc")
    rs=$(tail -n 1 "$TMP/rss.sgc")
    echo "[w3m_preload] peak RSS: bdwgc $((rb / 1024)) MiB, sgc $((rs / 1024)) MiB"
    if [ "$rs" -gt $((2 * rb + 65536)) ]; then
        echo "FAIL [w3m_preload] sgc's peak RSS is more than 2 x bdwgc's + 64 MiB"
        status=1
    fi
fi

# Did sgc serve the allocations?  The dynamic linker's view ...
echo '<html><body><p>small &amp; quick</p></body></html>' >"$TMP/small.html"
LD_PRELOAD="$LIB" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TMP/ld" \
    "$W3M" -dump -T text/html "$TMP/small.html" >/dev/null 2>&1 </dev/null
libname=$(basename "$LIB")
if cat "$TMP"/ld.* 2>/dev/null | grep "to $LIB\|/$libname" | grep -q "GC_malloc'"; then
    echo "[w3m_preload] LD_DEBUG: w3m's GC_malloc is bound to $libname"
else
    echo "FAIL [w3m_preload] LD_DEBUG=bindings shows no binding of GC_malloc to $LIB:"
    cat "$TMP"/ld.* 2>/dev/null | grep "GC_malloc'" | head -5
    status=1
fi
# ... and sgc's own report.
if grep -q "^sgc:" "$TMP/err.sgc"; then
    echo "[w3m_preload] SGC_STATS=1 summary:"
    grep -A3 "^sgc:" "$TMP/err.sgc" | head -8
else
    echo "FAIL [w3m_preload] SGC_STATS=1 printed no line starting with 'sgc:' to stderr:"
    tail -c 1000 "$TMP/err.sgc"
    status=1
fi
[ $status -eq 0 ] && echo "[w3m_preload] PASS"
exit $status
