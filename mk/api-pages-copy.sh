#!/bin/sh
# SPDX-License-Identifier: MIT
# mk/api-pages-copy.sh VENDOR DIR - Swagger UI's and ReDoc's files from the
# vendor folder VENDOR into DIR/swagger-ui and DIR/redoc, for the API
# pages of both services (mk/platform-www.am, mk/face-www.am).  ReDoc's
# bundle fetches a logo from cdn.redoc.ly whatever its options: pointed
# at an empty data: URL, no page asks another host.
set -eu
vendor=$1
dir=$2
mkdir -p "$dir/swagger-ui" "$dir/redoc"
cp "$vendor/swagger-ui/swagger-ui.css" \
	"$vendor/swagger-ui/swagger-ui-bundle.js" \
	"$vendor/swagger-ui/swagger-ui-standalone-preset.js" "$dir/swagger-ui/"
sed 's|https://cdn\.redoc\.ly/redoc/logo-mini\.svg|data:,|' \
	"$vendor/redoc/redoc.standalone.js" >"$dir/redoc/redoc.standalone.js"
