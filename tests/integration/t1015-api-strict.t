#!/bin/bash
# t1015-api-strict.t - the request layer refuses what it would otherwise misread: a NUL byte
# (%00), an encoded slash (%2F) or a %3F in a path segment, a path id that is not one, a NUL
# in a query value, an unknown, repeated or value-less query parameter, a body that is not
# declared JSON (415), a date that does not exist or is before 1970; each is a JSON error
# naming the field, and changes nothing.  An announced body over 64 KiB is 413 before it is
# sent when the client waits to be asked for it, or is over 1 MiB; else it is read, then
# 413.  doc/openapi.yaml lists the query parameters of each route as routes.c declares.
test_description='allotd strict request layer'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# typed CTYPE METHOD PATH BODY: like api, with the Content-Type header CTYPE; "none" sends
# none, "curl" leaves curl its default for --data-binary (a form type).
typed() {
	local ctype=$1 method=$2 path=$3 body=$4
	local -a args=(-s --max-time 30 -o "$ALLOTD_DIR/reply" -w '%{http_code}' -X "$method"
		-H "X-Allot-User: root" --data-binary "$body")
	case "$ctype" in
	none) args+=(-H "Content-Type:") ;;
	curl) ;;
	*) args+=(-H "Content-Type: $ctype") ;;
	esac
	curl "${args[@]}" "$ALLOTD_URL$path" >"$ALLOTD_DIR/status"
	cat "$ALLOTD_DIR/reply"
	case "$(cat "$ALLOTD_DIR/status")" in 2*) return 0 ;; *) return 1 ;; esac
}
# unsupported CTYPE METHOD PATH BODY: 415 naming Content-Type.
unsupported() {
	test_expect_code 1 typed "$@" >out &&
	test "$(api_status)" = 415 &&
	test "$(json_get error.field <out)" = Content-Type
}

test_expect_success 'setup' '
	allotd_start AuthType=none TestMode=local &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2030-01-01\",\"su\":\"1h\"}" >out &&
	json_get id <out >alloc_id &&
	api_snapshot before
'
# libmicrohttpd decodes the path into a C string: without the check, chem%00x was chem.
test_expect_success 'a NUL byte (%00) in a path segment is 400 naming the parameter' '
	id=$(cat alloc_id) &&
	api_bad 400 name GET "/v1/accounts/chem%00x" &&
	api_bad 400 name PATCH "/v1/accounts/chem%00x" "{\"description\":\"changed\"}" &&
	api_bad 400 name DELETE "/v1/accounts/chem%00" &&
	api_bad 400 cluster GET "/v1/partitions/c1%00x/std" &&
	api_bad 400 name GET "/v1/partitions/c1/std%00x" &&
	api_bad 400 id GET "/v1/allocations/$id%00" &&
	api_bad 400 id POST "/v1/allocations/$id%00/credit" "{\"su\":\"1h\"}" &&
	api_bad 400 path GET "/v1/acc%00ounts"
'
# libmicrohttpd decodes the path before routing: without the check, c1%2Fstd was the two
# segments c1 and std, and $id%2Fcredit reached the credit route.
test_expect_success 'an encoded slash (%2F) in a path segment is 400 naming the parameter' '
	id=$(cat alloc_id) &&
	api_bad 400 cluster GET "/v1/partitions/c1%2Fstd" &&
	grep -q "cluster: contains an encoded ./. (%2F)" out &&
	api_bad 400 cluster GET "/v1/partitions/c1%2fstd" &&
	api_bad 400 name GET "/v1/partitions/c1/std%2F" &&
	api_bad 400 name GET "/v1/accounts/chem%2Fx" &&
	api_bad 400 name PATCH "/v1/accounts/chem%2Fx" "{\"description\":\"changed\"}" &&
	api_bad 400 name DELETE "/v1/clusters/c1%2F" &&
	api_bad 400 id POST "/v1/allocations/$id%2Fcredit" "{\"su\":\"1h\"}" &&
	api_bad 400 id GET "/v1/allocations/$id%2F" &&
	api_bad 400 path GET "/v1%2Faccounts" &&
	api_bad 400 path GET "/v1/acc%6Funts%2Fchem"
'
test_expect_success 'the first refused escape of a path is the one named' '
	api_bad 400 cluster GET "/v1/partitions/c1%00%2Fstd" &&
	grep -q "NUL byte" out &&
	api_bad 400 cluster GET "/v1/partitions/c1%2F%00std" &&
	grep -q "encoded ./." out
'
test_expect_success 'other escapes in paths and query values still decode' '
	api GET "/v1/accounts/ch%65m" >out && test "$(json_get name <out)" = chem &&
	api GET "/v1/partitions/c%31/st%64" >out && test "$(json_get name <out)" = std &&
	api GET "/v1/ledger?account=ch%65m" >out &&
	api GET "/v1/assocs?cluster=c%31&acc%6Funt=chem" >out &&
	api GET "/v1/ledger?since=2020-01-01T00%3A00%3A00Z&account=chem" >out &&
	api_bad 400 name GET "/v1/accounts/chem%252Fx" &&
	grep -q "not a letter" out &&
	api_bad 400 account GET "/v1/ledger?account=chem%2Fx" &&
	! grep -q "encoded" out
'
test_expect_success 'a %3F in a path segment is part of the segment' '
	api_bad 400 name GET "/v1/accounts/chem%3Fx" &&
	api_bad 400 name PATCH "/v1/accounts/chem%3Fx" "{\"description\":\"changed\"}"
'
test_expect_success 'a path id is decimal digits of a positive int64, else 400' '
	id=$(cat alloc_id) &&
	api_bad 400 id GET /v1/allocations/12abc &&
	api_bad 400 id GET /v1/allocations/-1 &&
	api_bad 400 id GET /v1/allocations/0 &&
	api_bad 400 id GET /v1/allocations/99999999999999999999 &&
	api_bad 400 id GET /v1/allocations/9223372036854775808 &&
	api_bad 400 id GET "/v1/allocations/+$id" &&
	api_bad 400 id GET "/v1/allocations/%20$id" &&
	api_bad 400 id POST "/v1/allocations/+$id/credit" "{\"su\":\"1h\"}" &&
	api_bad 400 id GET /v1/policies/99999999999999999999 &&
	api_bad 400 id GET /v1/commands/+1 &&
	api_bad 400 job_id GET /v1/jobs/c1/99999999999999999999 &&
	api_bad 400 job_id GET /v1/priority/c1/+1 &&
	API_USER=root test_expect_code 1 api GET /v1/allocations/9223372036854775807 >out &&
	test "$(api_status)" = 404 &&
	api GET "/v1/allocations/$id" >out && test "$(json_get id <out)" = "$id"
'
test_expect_success 'a NUL byte in a query value is 400 naming the parameter' '
	api_bad 400 account GET "/v1/ledger?account=chem%00x" &&
	api_bad 400 account GET "/v1/balances?account=chem%00x" &&
	api_bad 400 query GET "/v1/ledger?acc%00ount=chem"
'
test_expect_success 'an unknown query parameter is 400 naming it' '
	api_bad 400 acount GET "/v1/ledger?acount=chem" &&
	grep -q "GET /v1/ledger takes account cluster alloc job since after limit" out &&
	api_bad 400 acount GET "/v1/balances?acount=chem" &&
	api_bad 400 x GET "/v1/accounts?x=1" &&
	api_bad 400 algo GET "/v1/tree?algo=classic" &&
	api_bad 400 x POST "/v1/jobs/hold?x=1" "{}"
'
test_expect_success 'a repeated or value-less query parameter is 400' '
	api_bad 400 account GET "/v1/ledger?account=chem&account=other" &&
	api_bad 400 account GET "/v1/ledger?account" &&
	api_bad 400 active GET "/v1/balances?active&account=chem"
'
# Every parameter a handler reads must be in its route's list in routes.c: none of these
# may be refused as unknown (whatever else their values lead to).
test_expect_success 'every query parameter the handlers read is accepted' '
	while read -r path; do
		API_USER=root api GET "$path" >out
		if grep -q "unknown query parameter\|parameter name is not one" out; then
			echo "refused: $path: $(cat out)"; return 1
		fi
	done <<-\EOF
	/v1/assocs?cluster=c1&account=chem&user=root
	/v1/partitions?cluster=c1
	/v1/limits?scope=account&owner=chem
	/v1/limits/effective?cluster=c1&user=root&account=chem&partition=std&qos=normal
	/v1/allocations?account=chem&resource=cpu&active=true&user=root
	/v1/balances?account=chem&resource=cpu&active=false&user=root
	/v1/ledger?account=chem&cluster=c1&alloc=1&job=1&since=2020-01-01&after=0&limit=5
	/v1/jobs?cluster=c1&account=chem&user=root&status=held&since=0&limit=5
	/v1/failures?account=chem&user=root&since=0&limit=5
	/v1/share?cluster=c1&algo=classic
	/v1/tree?cluster=c1
	/v1/usage?cluster=c1&account=chem&user=root&since=2020-01-01&until=2030-01-01
	/v1/priority/c1/1?cluster_cpus=8&cluster_nodes=1
	/v1/evaluations?policy=1&period=2026&limit=5
	/v1/commands?cluster=c1&policy=1&period=2026&state=pending&after=0&limit=5
	/v1/sitefactors?cluster=c1
	/v1/steps?cluster=c1&user=root&job=1&limit=5
	EOF
'
test_expect_success 'a body that is not declared JSON is 415 naming Content-Type' '
	unsupported text/plain POST /v1/accounts "{\"name\":\"t1\"}" &&
	unsupported application/x-www-form-urlencoded POST /v1/accounts "{\"name\":\"t2\"}" &&
	unsupported curl POST /v1/accounts "{\"name\":\"t3\"}" &&
	unsupported none POST /v1/accounts "{\"name\":\"t4\"}" &&
	unsupported application/jsonx POST /v1/accounts "{\"name\":\"t5\"}" &&
	unsupported text/plain PATCH /v1/accounts/chem "{\"description\":\"changed\"}" &&
	unsupported text/plain PUT /v1/limits "{\"scope\":\"account\",\"owner\":\"chem\",\"name\":\"MaxJobs\",\"value\":\"5\"}" &&
	unsupported text/plain POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":7,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1}" &&
	unsupported text/plain POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":7,\"elapsed_s\":5}"
'
# raw_request HEAD_LINES...: send the lines as a request head (CRLF-terminated, then the empty
# line) on a new TCP connection and no body; the whole reply to reply.raw, read until
# allotd closes the connection (bounded: 20 s).  Fails when allotd neither answers nor closes.
raw_request() {
	local line rc fd
	# A descriptor bash picks: sharness keeps its own output on 3 and 4.
	exec {fd}<>"/dev/tcp/127.0.0.1/$ALLOTD_PORT" || return 1
	for line in "$@"; do printf "%s\r\n" "$line"; done >&$fd
	printf "\r\n" >&$fd
	timeout 20 cat <&$fd >reply.raw
	rc=$?
	exec {fd}>&-
	return $rc
}
# allotd waited for the 100 MB body before answering (and read and dropped it all).
test_expect_success 'an announced body over 64 KiB is 413 before any of it is sent' '
	raw_request "POST /v1/accounts HTTP/1.1" "Host: 127.0.0.1" "X-Allot-User: root" \
		"Content-Type: application/json" "Content-Length: 100000000" &&
	head -n 1 reply.raw | grep -q "^HTTP/1.1 413 " &&
	grep -qi "^Connection: close" reply.raw &&
	sed "1,/^\r\$/d" reply.raw >out &&
	test "$(json_get error.code <out)" = ETOOBIG &&
	test "$(json_get error.field <out)" = body &&
	grep -q "body: larger than 65536 bytes" out
'
test_expect_success 'also on a PATCH, and on a keep-alive request, which is closed' '
	raw_request "PATCH /v1/accounts/chem HTTP/1.1" "Host: 127.0.0.1" "X-Allot-User: root" \
		"Connection: keep-alive" "Content-Type: application/json" \
		"Content-Length: 65537" "Expect: 100-continue" &&
	head -n 1 reply.raw | grep -q "^HTTP/1.1 413 " &&
	grep -qi "^Connection: close" reply.raw &&
	! grep -q "100 Continue" reply.raw
'
# A client that sends its body without asking (curl does, up to 1 MiB) gets the 413 after
# allotd has read the body: answered before and closed, the unread bytes would reset the
# connection, and the reset can destroy the reply before the client reads it.  So with
# part of the body sent, no reply may come yet.
test_expect_success 'a body over 64 KiB sent without asking is read, then answered 413' '
	python3 -c "import sys; sys.stdout.write(\"{\\\"name\\\":\\\"\" + \"a\"*65526 + \"\\\"}\")" >big65537 &&
	test "$(wc -c <big65537)" = 65537 &&
	exec {fd}<>"/dev/tcp/127.0.0.1/$ALLOTD_PORT" &&
	printf "POST /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Allot-User: root\r\nContent-Type: application/json\r\nContent-Length: 65537\r\n\r\n" >&$fd &&
	head -c 1000 big65537 >&$fd &&
	test_expect_code 124 timeout 1 cat <&$fd >early.raw &&
	test ! -s early.raw &&
	tail -c +1001 big65537 >&$fd &&
	timeout 20 cat <&$fd >reply.raw && exec {fd}>&- &&
	head -n 1 reply.raw | grep -q "^HTTP/1.1 413 " &&
	grep -qi "^Connection: close" reply.raw &&
	sed "1,/^\r\$/d" reply.raw >out &&
	test "$(json_get error.code <out)" = ETOOBIG &&
	test "$(json_get error.field <out)" = body
'
test_expect_success 'curl posting 1 MiB without asking gets the 413, twenty times in a row' '
	python3 -c "import sys; sys.stdout.write(\"{\\\"name\\\":\\\"\" + \"a\"*(1048576-11) + \"\\\"}\")" >big1m &&
	test "$(wc -c <big1m)" = 1048576 &&
	for i in $(seq 20); do
		code=$(curl -s -o /dev/null -w "%{http_code}" -H "X-Allot-User: root" \
			-H "Content-Type: application/json" -H "Expect:" --data-binary @big1m \
			"$ALLOTD_URL/v1/accounts") &&
		test "$code" = 413 || { echo "try $i: $code"; return 1; }
	done
'
# json_of_size N: a JSON object of exactly N bytes (N >= 40) on stdout.
json_of_size() {
	python3 -c 'import sys
head = "{\"name\":\"big\",\"description\":\""
sys.stdout.write(head + "d" * (int(sys.argv[1]) - len(head) - 2) + "\"}")' "$1"
}
# post_file FILE [CURL ARGS...]: POST FILE to /v1/accounts; body to out, status to code.
post_file() {
	local file=$1
	shift
	curl -s --max-time 30 -o out -w "%{http_code}" -X POST -H "X-Allot-User: root" \
		-H "Content-Type: application/json" "$@" --data-binary "@$file" \
		"$ALLOTD_URL/v1/accounts" >code
}
test_expect_success 'a chunked body over 64 KiB is still 413' '
	json_of_size 70000 >big &&
	post_file big -H "Transfer-Encoding: chunked" &&
	test "$(cat code)" = 413 &&
	test "$(json_get error.code <out)" = ETOOBIG &&
	grep -q "body: larger than 65536 bytes" out
'
test_expect_success 'a body of 64 KiB or just over, with Content-Length' '
	json_of_size 65536 >exact &&
	test "$(wc -c <exact)" = 65536 &&
	post_file exact &&
	test "$(cat code)" = 400 &&
	test "$(json_get error.field <out)" = description &&
	json_of_size 65537 >over &&
	post_file over &&
	test "$(cat code)" = 413 &&
	test "$(json_get error.code <out)" = ETOOBIG &&
	test "$(json_get error.field <out)" = body
'
test_expect_success 'nothing changed' '
	api_snapshot after &&
	test_cmp before after &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success 'application/json with parameters, in any case, is accepted' '
	typed "application/json; charset=utf-8" POST /v1/accounts "{\"name\":\"j1\"}" &&
	typed "Application/JSON;charset=UTF-8" POST /v1/accounts "{\"name\":\"j2\"}" &&
	typed "application/json " POST /v1/accounts "{\"name\":\"j3\"}" &&
	api GET /v1/accounts/j3 >out && test "$(json_get name <out)" = j3
'
test_expect_success 'a POST without a body needs no Content-Type' '
	curl -s -o out -w "%{http_code}" -X POST -H "X-Allot-User: root" \
		"$ALLOTD_URL/v1/policies/tick" >code &&
	test "$(cat code)" = 200 &&
	curl -s -o out -w "%{http_code}" -X POST -H "X-Allot-User: root" -d "" \
		"$ALLOTD_URL/v1/policies/tick" >code &&
	test "$(cat code)" = 200
'
test_expect_success 'a real leap day is accepted' '
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2032-02-29\",\"end\":\"2032-12-31T23:59:59Z\",\"su\":\"1h\"}" >out &&
	test "$(json_get start <out)" = 2032-02-29T00:00:00Z &&
	test "$(json_get end <out)" = 2032-12-31T23:59:59Z 
'
test_expect_success 'snapshot again' 'api_snapshot before'
# strptime takes day 1..31 and second 60; timegm moved them to another date.
test_expect_success 'a date that does not exist is 400 naming the field' '
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-02-30\",\"end\":\"2032-01-01\",\"su\":\"1h\"}" &&
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-02-29\",\"end\":\"2032-01-01\",\"su\":\"1h\"}" &&
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-13-01\",\"end\":\"2032-01-01\",\"su\":\"1h\"}" &&
	api_bad 400 end POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-01-01\",\"end\":\"2031-04-31T23:00:00Z\",\"su\":\"1h\"}" &&
	api_bad 400 end POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-01-01\",\"end\":\"2031-04-31T25:00:00Z\",\"su\":\"1h\"}" &&
	api_bad 400 end POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-01-01\",\"end\":\"2031-06-30T23:59:60Z\",\"su\":\"1h\"}" &&
	api_bad 400 start PATCH "/v1/allocations/$(cat alloc_id)" "{\"start\":\"2019-02-29\"}" &&
	api_bad 400 submit POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":8,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1,\"submit\":\"2026-02-30T00:00:00Z\"}" &&
	api_bad 400 since GET "/v1/ledger?since=2026-02-31" &&
	api_bad 400 since GET "/v1/jobs?since=2026-06-31"
'
# timegm gave a negative time: the allocation started in 1969, since= read before it.
test_expect_success 'a date before 1970-01-01 is 400 naming the field' '
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":\"1969-12-31\",\"end\":\"2032-01-01\",\"su\":\"1h\"}" &&
	grep -q "before 1970-01-01" out &&
	api_bad 400 start PATCH "/v1/allocations/$(cat alloc_id)" "{\"start\":\"1960-01-01T00:00:00Z\"}" &&
	api_bad 400 submit POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":9,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1,\"submit\":\"1969-07-20T20:17:40Z\"}" &&
	api_bad 400 since GET "/v1/ledger?since=1969-12-31" &&
	api_bad 400 since GET "/v1/jobs?since=1900-01-01" &&
	api_bad 400 until GET "/v1/usage?until=1969-12-31T23:59:59Z" &&
	api_bad 400 since GET "/v1/ledger?since=-1" &&
	api GET "/v1/ledger?since=1970-01-01&account=chem" >out
'
# jansson refuses a string that is not UTF-8: the error object was lost and the body was {}.
test_expect_success 'an error quoting bytes that are not UTF-8 keeps its error object' '
	api_bad 400 limit GET "/v1/ledger?limit=%FF" &&
	test "$(json_get error.code <out)" = EINVAL
'
test_expect_success 'nothing changed' '
	api_snapshot after &&
	test_cmp before after &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
# The query parameters each route declares in routes.c (what it accepts) are the ones
# doc/openapi.yaml lists for that path and method (path-level and operation-level, $ref
# resolved); a route missing from either side is a mismatch too.
test_expect_success 'doc/openapi.yaml lists the query parameters of routes.c' '
	python3 - "$ALLOT_SRC_DIR" >mismatches <<-\PY || { cat mismatches; false; }
	import re, sys, yaml
	src = sys.argv[1]
	code = open(src + "/src/allotd/routes.c").read()
	entry = re.compile(r"\{\"(GET|POST|PATCH|PUT|DELETE)\",\s*\"(/[^\"]*)\",\s*\w+,\s*\w+,"
	                   r"\s*\d+,\s*(?:NULL|\"[^\"]*\"),\s*(NULL|\"[^\"]*\")\s*\}")
	code_q = {}
	for m in entry.finditer(code):
	    q = m.group(3)
	    code_q[(m.group(1), m.group(2))] = set() if q == "NULL" else set(q.strip("\"").split())
	heads = re.findall(r"\{\"(?:GET|POST|PATCH|PUT|DELETE)\", \"/", code)
	if not code_q or len(heads) != len(code_q):
	    print("routes.c: %d routes, %d understood" % (len(heads), len(code_q)))
	    sys.exit(1)
	api = yaml.safe_load(open(src + "/doc/openapi.yaml"))
	comp = api["components"]["parameters"]
	def resolve(p):
	    return comp[p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p
	doc_q = {}
	for path, ops in api["paths"].items():
	    common = [resolve(p) for p in ops.get("parameters", [])]
	    for meth, op in ops.items():
	        if meth not in ("get", "post", "patch", "put", "delete"):
	            continue
	        ps = common + [resolve(p) for p in op.get("parameters", [])]
	        key = (meth.upper(), re.sub(r"\{[^}]*\}", "{}", path))
	        doc_q[key] = {p["name"] for p in ps if p["in"] == "query"}
	bad = 0
	for k in sorted(set(code_q) | set(doc_q)):
	    c, d = code_q.get(k), doc_q.get(k)
	    if c != d:
	        show = lambda v: " ".join(sorted(v)) if v is not None else "(no such route)"
	        print("%s %s: routes.c [%s], openapi.yaml [%s]" % (k[0], k[1], show(c), show(d)))
	        bad = 1
	sys.exit(bad)
	PY
'
test_expect_success 'cleanup' 'allotd_stop'
test_done
