#!/usr/bin/env bash
# chart.sh draws a load-test run as a PNG: purchase answers per second by
# HTTP status (top, log scale) and the purchase p99 latency (bottom), a
# point a second, or four a second for a run under 20 s, from k6's CSV output (`k6 run --out csv=FILE[.gz]`). run.sh calls it
# after every run; it needs gnuplot (Debian: gnuplot-nox) and awk.
#
# usage: loadtest/chart.sh K6_CSV[.gz] OUT.png [TITLE]
set -euo pipefail

[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
csv=$1 png=$2 title=${3:-$(basename "$png" .png)}
command -v gnuplot >/dev/null || { echo "chart.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

read_csv() { case "$csv" in *.gz) gzip -dc "$csv" ;; *) cat "$csv" ;; esac; }

# Purchase samples only (k6 tag name=purchase): "time status" for every
# answer and "time milliseconds" for every duration. k6 writes whole Unix
# seconds by default, Unix milliseconds with K6_CSV_TIME_FORMAT=unix_milli
# (run.sh's); the chart counts seconds from the run's first sample.
read_csv | awk -F, -v answers="$tmp/answers" -v durations="$tmp/durations" '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["name"] != "purchase" { next }
	{ t = $col["timestamp"] + 0; if (t > 1e11) t /= 1000 }
	$col["metric_name"] == "http_reqs" { printf "%.3f %s\n", t, ($col["status"] == "" ? 0 : $col["status"]) > answers }
	$col["metric_name"] == "http_req_duration" { printf "%.3f %s\n", t, $col["metric_value"] > durations }
'
[ -s "$tmp/answers" ] || { echo "chart.sh: no purchase samples in $csv" >&2; exit 1; }
read -r start end < <(awk 'NR == 1 || $1 < m { m = $1 } NR == 1 || $1 > x { x = $1 } END { print m, x }' "$tmp/answers")
# One point a second, or four for a run under 20 s (a 3-s smoke run then
# has a dozen points, not four), when the timestamps have the resolution.
bin=$(awk -v s="$start" -v e="$end" 'BEGIN { print ((e - s < 20 && (e != int(e) || s != int(s))) ? 0.25 : 1) }')

# answers.dat: one row per bin (its start, in seconds), one column per
# status (header: the codes), in answers per second.
awk -v start="$start" -v bin="$bin" '
	{ b = int(($1 - start) / bin); n[b, $2]++; seen[$2] = 1; if (b > last) last = b }
	END {
		k = 0
		for (s in seen) codes[++k] = s
		for (i = 2; i <= k; i++) for (j = i; j > 1 && codes[j-1] + 0 > codes[j] + 0; j--) { x = codes[j]; codes[j] = codes[j-1]; codes[j-1] = x }
		printf "second"; for (i = 1; i <= k; i++) printf " %s", (codes[i] == 0 ? "error" : codes[i]); print ""
		for (b = 0; b <= last; b++) { printf "%g", b * bin; for (i = 1; i <= k; i++) printf " %g", (n[b, codes[i]] + 0) / bin; print "" }
	}' "$tmp/answers" >"$tmp/answers.dat"

# p99.dat: the 99th percentile (nearest rank) of each bin's durations.
awk -v start="$start" -v bin="$bin" '{ printf "%d %s\n", int(($1 - start) / bin), $2 }' "$tmp/durations" | sort -k1,1n -k2,2g | awk -v bin="$bin" '
	function flush() { if (c > 0) { r = int(0.99 * c + 0.999999); printf "%g %.3f\n", b * bin, v[r] } c = 0 }
	NR == 1 || $1 != b { flush(); b = $1 }
	{ v[++c] = $2 }
	END { flush() }' >"$tmp/p99.dat"

ncols=$(head -n 1 "$tmp/answers.dat" | wc -w)
# One colour per status, the same in every chart: sold green, refused
# (409) orange, busy (429) blue, unavailable (503) red, others grey.
colors=""
for code in $(head -n 1 "$tmp/answers.dat" | cut -d' ' -f2-); do
	case "$code" in
	201) c="#2ca02c" ;; 409) c="#ff7f0e" ;; 429) c="#1f77b4" ;; 503) c="#d62728" ;;
	error) c="#000000" ;; 4*) c="#9467bd" ;; *) c="#7f7f7f" ;;
	esac
	colors="$colors $c"
done
gnuplot <<GP
set terminal pngcairo size 960,560 font "DejaVu Sans,10"
set output "$png"
colors = "$colors"
set multiplot layout 2,1 title "$title"
set key outside right top vertical
set grid xtics ytics
set lmargin 12
set rmargin 16
# Answers/s on a log scale: a sale's few hundred 201s next to thousands of
# 429s or 409s. A second without a status has no point.
set ylabel "purchase answers/s (log)"
set logscale y
set format x ""
set size 1,0.58
set origin 0,0.38
plot for [i=2:$ncols] "$tmp/answers.dat" using 1:(column(i) > 0 ? column(i) : NaN) title columnheader(i) with linespoints pt 7 ps 0.5 lw 2 lc rgb word(colors, i-1)
unset logscale y
set format x "%g"
set xlabel "seconds since the first purchase"
set ylabel sprintf("p99 of each %gs (ms)", $bin)
set yrange [0:*]
set size 1,0.38
set origin 0,0
plot "$tmp/p99.dat" using 1:2 title "p99" with linespoints pt 7 ps 0.5 lw 2 lc rgb "#444444"
unset multiplot
GP
echo "$png"
