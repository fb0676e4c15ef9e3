#!/bin/bash
# t1065-dashboard-browser.t - the web dashboard: allotd serves its page, script and style
# sheet with the Content-Security-Policy and browser headers, a 404 for any other name; then
# a real browser (headless Chromium, when installed) opens the `allot dashboard` link with a
# read-only token and renders the balances table and a burn-down chart from the API (with
# the forecast line of GET /v1/forecasts), and
# without a token or with a bad one shows what to do instead.
test_description='allotd web dashboard in a browser'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

CSP="default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
CSP+="img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

# Debian's chromium (tests/run.sh installs it); without it the browser steps are skipped.
if command -v chromium >/dev/null 2>&1; then
	test_set_prereq CHROMIUM
else
	say "chromium is not installed: skipping the browser steps (apt-get install chromium)"
fi

# browse URL OUT: the DOM of URL after its scripts ran (bounded: virtual time lets the page's
# fetches finish without a fixed sleep).  A profile of its own, as root needs --no-sandbox.
browse() {
	run_bounded 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --user-data-dir="$PWD/chromium-profile" \
		--virtual-time-budget=10000 --dump-dom "$1" >"$2" 2>chromium.log
}

# header NAME FILE: the value of a header in a `curl -si` reply, without the CR.
header() {
	sed -n "s/^$1: \(.*\)\r\$/\1/Ip" "$2" | head -n 1
}

test_expect_success 'start allotd' '
	allotd_start AuthType=none TestMode=local Operators=slurm
'
test_expect_success 'bank: cluster, account, user, partition, allocation, a settled job' '
	start=$(date -u -d "-60 days" +%F) && end=$(date -u -d "+300 days" +%F) &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\",
		\"billing_weights\":\"CPU=1.0\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"$start\",
		\"end\":\"$end\",\"su\":\"1000h\"}" >out &&
	json_get id <out >alloc_id &&
	api POST /v1/allocations/$(cat alloc_id)/credit "{\"su\":\"500h\",\"comment\":\"top-up\"}" &&
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":101,\"user\":\"alice\",
		\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":7200,\"billing\":16}" &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":101,
		\"elapsed_s\":3600,\"state\":\"COMPLETED\"}" >out &&
	test "$(json_get job.charge_sumin <out)" = 960 &&
	api GET "/v1/balances?account=chem" >out &&
	test "$(json_get items.0.used_sumin <out)" = 960
'
test_expect_success '/dashboard: the page, public, with the CSP and browser headers' '
	curl -si --max-time 10 "$ALLOTD_URL/dashboard" >page &&
	head -n 1 page | grep "^HTTP/1.1 200" &&
	test "$(header Content-Type page)" = "text/html; charset=utf-8" &&
	test "$(header Content-Security-Policy page)" = "$CSP" &&
	test "$(header X-Content-Type-Options page)" = nosniff &&
	test "$(header Referrer-Policy page)" = no-referrer &&
	test "$(header Cache-Control page)" = no-cache &&
	grep "dashboard/dashboard.js" page &&
	grep "dashboard/dashboard.css" page
'
test_expect_success '/dashboard/dashboard.js and .css with their types and the CSP' '
	curl -si --max-time 10 "$ALLOTD_URL/dashboard/dashboard.js" >js &&
	head -n 1 js | grep "^HTTP/1.1 200" &&
	test "$(header Content-Type js)" = "text/javascript; charset=utf-8" &&
	test "$(header Content-Security-Policy js)" = "$CSP" &&
	curl -si --max-time 10 "$ALLOTD_URL/dashboard/dashboard.css" >css &&
	head -n 1 css | grep "^HTTP/1.1 200" &&
	test "$(header Content-Type css)" = "text/css; charset=utf-8"
'
test_expect_success 'any other name is a 404 with a JSON error' '
	API_NOAUTH=1 test_expect_code 1 api GET /dashboard/nope.js >out &&
	test "$(api_status)" = 404 &&
	test "$(json_get error.code <out)" = ENOENT &&
	API_NOAUTH=1 test_expect_code 1 api GET /dashboard/index.html >out &&
	test "$(api_status)" = 404 &&
	API_NOAUTH=1 test_expect_code 1 api GET /dashboard/%2e%2e >out &&
	test "$(api_status)" = 404 &&
	curl -si --max-time 10 "$ALLOTD_URL/dashboard/nope.js" >nope &&
	test -z "$(header Content-Security-Policy nope)"
'
test_expect_success 'a read-only token for the browser (POST /v1/tokens)' '
	api POST /v1/tokens "{}" >out &&
	json_get token <out >token &&
	grep -E "^[0-9a-f]{64}\$" token
'
test_expect_success CHROMIUM 'the link renders the balances table and a burn-down chart' '
	id=$(cat alloc_id) &&
	browse "$ALLOTD_URL/dashboard#token=$(cat token)" dom.html &&
	python3 - "$id" <<-\EOF
	import re, sys
	alloc = sys.argv[1]
	dom = open("dom.html").read()
	def need(cond, what):
	    if not cond:
	        sys.exit("missing: " + what + "\n" + dom[:4000])
	need("Signed in as <strong>root</strong>" in dom, "the header naming the user")
	rows = re.findall(r"<tr>(.*?)</tr>", re.search(r"<tbody.*?</tbody>", dom, re.S).group(0), re.S)
	row = [r for r in rows if "<td class=\"account\">chem</td>" in r]
	need(len(row) == 1, "one table row for chem")
	need("#" + alloc + "<" in row[0], "the allocation id in its row")
	need(">1500h<" in row[0] and ">16h<" in row[0], "granted 1500h and used 16h")
	chart = re.search(r"<figure[^>]*id=\"chart-" + alloc + r"\".*?</figure>", dom, re.S)
	need(chart, "the chart figure of allocation " + alloc)
	svg = re.search(r"<svg[^>]*role=\"img\"[^>]*aria-label=\"([^\"]*)\"", chart.group(0))
	need(svg, "an <svg> chart with an aria-label")
	need("1484h of 1500h" in svg.group(1), "the numbers in the chart label: " + svg.group(1))
	need("class=\"c-remaining\"" in chart.group(0), "the remaining line")
	need("class=\"c-ideal\"" in chart.group(0), "the ideal burn line")
	need("class=\"c-forecast\"" in chart.group(0), "the forecast line")
	summ = re.search(r"<p class=\"summary\">(.*?)</p>", chart.group(0), re.S)
	need(summ and "(allot forecast)" in summ.group(1) and "left unused at the end" in summ.group(1),
	     "the forecast sentence under the chart")
	need("Could not load" not in dom, "no load error")
	EOF
'
test_expect_success CHROMIUM 'without a token the page says how to get a link' '
	browse "$ALLOTD_URL/dashboard" dom.html &&
	grep "allot dashboard" dom.html &&
	! grep "<tbody id=\"rows\"><tr>" dom.html
'
test_expect_success CHROMIUM 'an unknown token: the link expired or is invalid' '
	browse "$ALLOTD_URL/dashboard#token=$(printf "%064d" 0)" dom.html &&
	grep "expired or is invalid" dom.html &&
	! grep "<tbody id=\"rows\"><tr>" dom.html
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
