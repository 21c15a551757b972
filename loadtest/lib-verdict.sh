# lib-verdict.sh: run.sh's verdict on a run, sourced by it: what k6
# reports, and the books read directly. Both add what they find to
# $violations.

# k6_verdict reads k6's summary ($summary_json): the purchases' count, rate
# and latencies, and the 201s it counted ($created_201).
k6_verdict() {
	created_201=0 reqs=0 rate=0 p50=- p95=- p99=-
	if [ -s "$summary_json" ]; then
		read -r created_201 reqs rate p50 p95 p99 < <(jq -r '
			def v(m; f): (.metrics[m].values[f] // 0);
			def ms(x): (x * 100 | round / 100 | tostring) + "ms";
			[ v("orders_created"; "count"),
			  (v("http_reqs{name:purchase}"; "count")),
			  ((v("http_reqs{name:purchase}"; "count") / (.state.testRunDurationMs / 1000)) | round),
			  ms(v("http_req_duration{name:purchase}"; "med")),
			  ms(v("http_req_duration{name:purchase}"; "p(95)")),
			  ms(v("http_req_duration{name:purchase}"; "p(99)")) ] | @tsv' "$summary_json")
	else
		violations+=("k6 wrote no summary")
	fi
	# k6's verdict, split: a missed latency target is a performance result; any
	# other failed threshold (oversell, audit, unexpected status, error rate,
	# liveness) or a script error is a safety violation.
	perf_failed=""
	if [ "$k6_rc" != 0 ]; then
		safety_failed=""
		if [ -s "$summary_json" ]; then
			perf_failed=$(jq -r '[.metrics | to_entries[] | select(.key | startswith("http_req_duration")) | .key as $m
				| (.value.thresholds // {}) | to_entries[] | select(.value.ok == false) | "\($m) \(.key)"] | join("; ")' "$summary_json")
			safety_failed=$(jq -r '[.metrics | to_entries[] | select(.key | startswith("http_req_duration") | not) | .key as $m
				| (.value.thresholds // {}) | to_entries[] | select(.value.ok == false) | "\($m) \(.key)"] | join("; ")' "$summary_json")
		fi
		if [ -n "$safety_failed" ]; then
			violations+=("k6 thresholds failed: $safety_failed")
		elif [ "$k6_rc" != 99 ] || [ -z "$perf_failed" ]; then
			violations+=("k6 exited $k6_rc (script error, or the teardown audit failed: see $logs/k6.log)")
		fi
		[ -z "$perf_failed" ] || log "PERFORMANCE: latency target missed: $perf_failed"
	fi
}

# books_verdict reads the books, by the service's own check (read_books,
# lib.sh), then the units with SQL, then every 201's order. Expired and
# refund_required orders gave their units back (docs/API.md "Payments and
# expiry"). It reads Redis directly, not through the redis-delay proxy.
books_verdict() {
	books_rc=0
	read_books "$bin" SECKILL_REDIS_MODE="$redis_mode" SECKILL_REDIS_URL="$direct_redis_url" SECKILL_MYSQL_DSN="$dsn" SECKILL_KEY_PREFIX="$prefix" ||
		books_rc=$?
	books_json="$logs/books.json" unread=$(books_unread "$books_rc")
	total_all=0 orders_all=0 rows_all=0 paid_all=0 expired_all=0 oversold_all=0 dup_all=0 imbalance_all=0 remaining_all=0 activities=0
	if [ -n "$unread" ]; then
		violations+=("$unread")
	else
		read -r activities total_all orders_all rows_all paid_all expired_all oversold_all dup_all imbalance_all remaining_all < <(jq -r '
			def sum(f): map(f) | add // 0;
			.activities | [length, sum(.total_stock), sum(.held), sum(.rows), sum(.paid), sum(.expired),
			  sum(.oversold), sum(.duplicate_users), sum(.imbalance), sum(.redis_remaining // 0)] | @tsv' "$books_json")
		# The naive build's handler never records its sales in activities.sold.
		while IFS= read -r v; do violations+=("$v"); done < <(jq -r --argjson naive "$naive" \
			'.violations[] | select($naive == 0 or .check != "sold") | .message' "$books_json")
		if [ "$scenario" = payments ]; then
			while IFS= read -r v; do violations+=("$v"); done < <(jq -r '.activities[] | select(.paid != .total_stock)
				| "activity \(.activity_id): \(.paid) of \(.total_stock) units paid at the end, want all (\(.expired) expired)"' "$books_json")
		fi
	fi
	[ "$activities" -gt 0 ] || violations+=("no activity in database $db")
	# Units, read with SQL whatever `seckill books` counts: an order of k units
	# holds k. Per activity, the created and paid orders' quantities <= total,
	# and with Redis's remaining (the books' read) == total.
	# orders_db counts the orders holding units (the books' held counts units).
	units_all=0 units_oversold=0 unit_rows=""
	if [ -z "$unread" ] && ! unit_rows=$(units_books 2>"$logs/units.err"); then
		violations+=("the units could not be read with SQL: $(tail -n 1 "$logs/units.err")")
	fi
	if [ -n "$unit_rows" ]; then
		orders_all=0
		while read -r id total units orders; do
			units_all=$((units_all + units)) orders_all=$((orders_all + orders))
			if [ "$units" -gt "$total" ]; then
				units_oversold=$((units_oversold + units - total))
				violations+=("activity $id: its orders hold $units units of $total: OVERSOLD by $((units - total)) units")
			fi
			rem=$(jq -r --argjson id "$id" '.activities[] | select(.activity_id == $id) | .redis_remaining // "none"' "$books_json")
			if [ "$rem" != none ] && [ $((units + rem)) != "$total" ]; then
				violations+=("activity $id: $units units held + $rem in Redis != $total: the units do not balance")
			fi
		done <<<"$unit_rows"
	fi
	# Every 201, by its order id: a row of the run's database holding the units
	# it answered (k6's CSV samples of units_created carry the ids).
	answered="$logs/answered.txt" units_201=0 missing=0
	if [ -s "$samples" ]; then
		answered_orders "$samples" >"$answered"
		units_201=$(awk '{ s += $2 } END { print s + 0 }' "$answered")
		missing_answers "$answered" >"$logs/missing.txt" 2>"$logs/missing.err" ||
			violations+=("the 201s' orders could not be looked up: $(tail -n 1 "$logs/missing.err")")
		missing=$(wc -l <"$logs/missing.txt")
		[ "$missing" -eq 0 ] || violations+=("$missing orders answered 201 are not in the database as answered: LOST ($(head -n 3 "$logs/missing.txt" | paste -sd';'); all in $logs/missing.txt)")
	fi
	[ "$units_201" -le "$((total_all))" ] || [ "$scenario" = payments ] ||
		violations+=("$units_201 units answered 201, more than the $total_all of the stock: OVERSOLD")
	# Every 201 must have its row. (Rows without a 201 can exist: a client that
	# timed out on a purchase that then committed; they are not lost.)
	lost=$((created_201 > rows_all ? created_201 - rows_all : 0))
	lost=$((lost > missing ? lost : missing))
	[ "$lost" -eq 0 ] || violations+=("$lost orders answered 201 are missing from the database: LOST")
}
