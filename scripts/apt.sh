# Installing Debian packages for the scripts that need a tool. Source it; do
# not run it. Messages go to stderr so the scripts' stdout stays clean.

# apt_install WHAT INSTEAD PACKAGE... installs the packages with apt-get, as
# root or through sudo. WHAT names the missing tool and INSTEAD tells the
# user what to do when it cannot be installed here, for the messages.
apt_install() {
	local what=$1 instead=$2 sudo=""
	shift 2
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "$(basename "$0"): $what not found and not root: $instead" >&2
			return 1
		fi
		sudo="sudo"
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "$(basename "$0"): $what not found and apt-get is unavailable: $instead" >&2
		return 1
	fi
	echo "$(basename "$0"): $what not found; installing it with apt-get" >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update >&2 &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >&2 || {
		echo "$(basename "$0"): apt-get install $* failed" >&2
		return 1
	}
}
