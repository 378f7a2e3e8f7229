# Sourced on the GPU machine after _env.sh: unpacks xvfb/xvfb.tar.xz (make-xvfb-bundle.sh),
# starts Xvfb on :99 and points GLX at the NVIDIA driver. Windows then render on the GPU.
X=/tmp/xvfb
mkdir -p "$X" && tar -C "$X" -xJf xvfb/xvfb.tar.xz
mkdir -p /usr/lib/x86_64-linux-gnu/dri && cp "$X/x/dri/swrast_dri.so" /usr/lib/x86_64-linux-gnu/dri/
cp "$X/x/xkbcomp" /usr/bin/xkbcomp 2>/dev/null || true
LD_LIBRARY_PATH="$X/x/lib:$LD_LIBRARY_PATH" "$X/x/Xvfb" :99 -screen 0 1920x1080x24 -nolisten tcp \
  -xkbdir "$X/x/xkb" >"$X/xvfb.log" 2>&1 &
XVFB_PID=$!
sleep 2
# NVIDIA's GLX client needs X client libraries the GPU machine's image lacks (libxcb-glx,
# libX11-xcb): without the carried ones GLFW finds no GLXFBConfig.
export DISPLAY=:99 __GLX_VENDOR_LIBRARY_NAME=nvidia LD_LIBRARY_PATH="$X/x/lib:$LD_LIBRARY_PATH"
