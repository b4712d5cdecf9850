# Source on the GPU host from the checkout's root: `source .vkval/vkval-env.sh`.
# Unpacks Khronos' validation layer (.vkval/, from ci/gpu/fetch-vk-validation-debs.sh) into
# /opt/vkval, puts it on the Vulkan loader's layer path, and turns on the wgpu tests' validation
# (CUDA_GL_VK_VALIDATION=1: their instance asks for the layer and they fail on its errors).
mkdir -p /opt/vkval
for f in .vkval/*.deb; do dpkg -x "$f" /opt/vkval; done
lib=/opt/vkval/usr/lib/x86_64-linux-gnu
export VK_LAYER_PATH=/opt/vkval/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_GL_VK_VALIDATION=1
echo "Vulkan validation layer: $VK_LAYER_PATH (CUDA_GL_VK_VALIDATION=1)"
