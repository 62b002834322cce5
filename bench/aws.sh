#!/usr/bin/env bash
# Side-by-side EC2 benchmark (issue 25), loopback only: fencekit (native and
# as fence_aws) vs upstream fence_aws (fence-agents 4.12.1 with the venv's
# Python and boto3) vs curl doing the one signed request a status needs,
# all against one moto server over HTTPS (its own self-signed certificate,
# trusted through AWS_CA_BUNDLE / curl --cacert) with IAM authentication on.
#
#   bench/aws.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N), off+on, peak RSS of a status
# (largest of 3, /usr/bin/time). Targets: agent status >= 10x faster than
# upstream fence_aws; agent RSS <= 1/4 of upstream's; native status within
# 2x of curl's one HTTPS request (curl --aws-sigv4: the same DescribeInstances,
# signed). --check exits 1 when a target is missed.
# Needs: moto, boto3 and fence-agents (tests/peers/setup.sh), hyperfine, curl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
. "$HERE/lib.sh"
bench_options 2,15 "$@"
bench_binary
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
PY="$PEERS_DIR/venv/bin/python"
PORT=$(( 20000 + RANDOM % 20000 ))
D="$PEERS_DIR/run/$(id -u)/moto-$PORT"
WORK=$(mktemp -d /tmp/fencekit-aws-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/moto_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
MOTO_PARENT_PID=$$ bash "$ROOT/tests/peers/moto_start.sh" "$PORT" tls >/dev/null
URL="https://127.0.0.1:$PORT"
CA="$D/cert.pem"
"$PY" "$ROOT/tests/peers/moto_setup.py" "$URL" --ca-bundle "$CA" > "$WORK/moto.json"
key() { python3 -c "import json;print(json.load(open('$WORK/moto.json'))['$1']['$2'])"; }
ADMIN_ID=$(key admin id); ADMIN_SECRET=$(key admin secret)
KEY_ID=$(key fencer id); SECRET=$(key fencer secret)
read -r INSTANCE SELF < <("$PY" - "$URL" "$CA" "$ADMIN_ID" "$ADMIN_SECRET" <<'EOF'
import sys, boto3
url, ca, kid, sec = sys.argv[1:]
ec2 = boto3.client('ec2', region_name='us-east-1', endpoint_url=url, verify=ca,
                   aws_access_key_id=kid, aws_secret_access_key=sec)
r = ec2.run_instances(ImageId='ami-0123456789abcdef0', MinCount=2, MaxCount=2)
print(' '.join(i['InstanceId'] for i in r['Instances']))
EOF
)
# The metadata service (IMDSv2 stub), saying the agents run on SELF: both
# consult it before a stop (upstream through HTTP_PROXY, as it asks
# 169.254.169.254 itself, and skips the stop when it cannot).
IMDS_PORT=$(( PORT + 1 ))
"$PY" "$ROOT/tests/peers/imds_stub.py" --listen "127.0.0.1:$IMDS_PORT" --instance-id "$SELF" > "$WORK/imds.out" &
IMDS_PID=$!
cleanup() { kill "$IMDS_PID" 2>/dev/null || true; bash "$ROOT/tests/peers/moto_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
for _ in $(seq 1 100); do grep -q ready "$WORK/imds.out" 2>/dev/null && break; sleep 0.05; done
ln -s "$BIN" "$WORK/fence_aws"
export AWS_ENDPOINT_URL="$URL" AWS_CA_BUNDLE="$CA" PYTHONWARNINGS=ignore
export AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$IMDS_PORT" HTTP_PROXY="http://127.0.0.1:$IMDS_PORT" NO_PROXY=127.0.0.1
ARGS="--access-key=$KEY_ID --secret-key=$SECRET --region=us-east-1 --plug=$INSTANCE"
UP="$PY /usr/sbin/fence_aws $ARGS"
FK="$WORK/fence_aws $ARGS"
BODY="Action=DescribeInstances&Version=2016-11-15&InstanceId.1=$INSTANCE"
CURL="curl -s --cacert $CA --aws-sigv4 aws:amz:us-east-1:ec2 --user $KEY_ID:$SECRET -H Content-Type:application/x-www-form-urlencoded -d $BODY $URL/"
$CURL | grep -q '<instanceState>' || { echo "curl's signed DescribeInstances failed" >&2; $CURL >&2; exit 1; }
# Every timed command must succeed (hyperfine -i would time failures too).
for c in "$UP -o status" "$FK -o status"; do
  [ "$($c 2>&1)" = "Status: ON" ] || { echo "not 'Status: ON': $c" >&2; $c >&2; exit 1; }
done
FENCEKIT_PASSWORD="$SECRET" "$BIN" status "aws://us-east-1/$INSTANCE" --access-key "$KEY_ID" >/dev/null \
  || { echo "fencekit status failed" >&2; exit 1; }

echo "== status (HTTPS, moto with IAM authentication, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(FENCEKIT_PASSWORD="$SECRET" median "$RUNS" "$BIN status aws://us-east-1/$INSTANCE --access-key $KEY_ID")
cu=$(median "$RUNS" "$CURL")
printf '%-44s %8s ms\n' "upstream fence_aws (python3 + boto3)" "$up"
printf '%-44s %8s ms   %sx faster than upstream\n' "fencekit as fence_aws" "$fk" "$(ratio "$up" "$fk")"
printf '%-44s %8s ms   %sx of curl\n' "fencekit status aws:// (native)" "$nat" "$(ratio "$nat" "$cu")"
printf '%-44s %8s ms\n' "curl --aws-sigv4, the one DescribeInstances" "$cu"

echo
echo "== off then on (median of 3; moto changes state at once)"
up_oo=$(median 3 "sh -c '$UP -o off >/dev/null; $UP -o on'")
fk_oo=$(median 3 "sh -c '$FK -o off >/dev/null; $FK -o on'")
printf '%-44s %8s ms\n' "upstream fence_aws off+on" "$up_oo"
printf '%-44s %8s ms   %sx faster\n' "fencekit as fence_aws off+on" "$fk_oo" "$(ratio "$up_oo" "$fk_oo")"

echo
echo "== peak RSS of a status (largest of 3)"
up_rss=$(rss $UP -o status)
fk_rss=$(rss $FK -o status)
printf '%-44s %8s MiB\n' "upstream fence_aws" "$up_rss"
printf '%-44s %8s MiB   %s of upstream\n' "fencekit as fence_aws" "$fk_rss" "$(python3 -c "print('1/%.1f' % ($up_rss/$fk_rss))")"

echo
fail=0
verdict "agent status >= 10x faster than upstream ($(ratio "$up" "$fk")x)" "$up / $fk >= 10"
verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
verdict "native status within 2x of curl ($(ratio "$nat" "$cu")x)" "$nat <= 2 * $cu"
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
