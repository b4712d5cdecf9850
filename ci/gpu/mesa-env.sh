# Source on the GPU host from the checkout's root: `source .mesa/mesa-env.sh`.
# Unpacks .gl/ (the libglvnd loader) into / and .mesa/ into /opt/mesa (never into /), keeps only
# the libraries the host lacks, and makes Mesa's EGL the only EGL vendor for this shell: headless
# GL is then Mesa's llvmpipe while libcuda stays NVIDIA's.
if [ -d .gl ] && ! ldconfig -p | grep -q 'libEGL.so.1 '; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
mkdir -p /opt/mesa/dup
for f in .mesa/*.deb; do dpkg -x "$f" /opt/mesa; done
mlib=/opt/mesa/usr/lib/x86_64-linux-gnu
ldconfig -p > /tmp/ldconfig-mesa.txt
for f in "$mlib"/*.so.*; do
  n=$(basename "$f")
  case "$n" in libEGL_mesa*|libgbm*|libglapi*) continue;; esac
  if grep -q "^[[:space:]]$n " /tmp/ldconfig-mesa.txt; then mv "$f" /opt/mesa/dup/; fi
done
cat > /opt/mesa/50_mesa.json <<JSON
{"file_format_version": "1.0.0", "ICD": {"library_path": "$mlib/libEGL_mesa.so.0"}}
JSON
export LD_LIBRARY_PATH=$mlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LIBGL_DRIVERS_PATH=$mlib/dri
export __EGL_VENDOR_LIBRARY_FILENAMES=/opt/mesa/50_mesa.json
echo "EGL vendor: Mesa only ($__EGL_VENDOR_LIBRARY_FILENAMES)"
# Lavapipe as the only Vulkan driver (its packaged ICD file names /usr/lib, where it is not).
if [ -f "$mlib/libvulkan_lvp.so" ]; then
  cat > /opt/mesa/lvp_icd.json <<JSON
{"file_format_version": "1.0.0", "ICD": {"library_path": "$mlib/libvulkan_lvp.so", "api_version": "1.3.230"}}
JSON
  export VK_DRIVER_FILES=/opt/mesa/lvp_icd.json
  echo "Vulkan driver: lavapipe only ($VK_DRIVER_FILES)"
fi
