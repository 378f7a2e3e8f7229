// A build without GLFW: `nbody view` reports why there is no window (GLFW is optional).
#include "error.hpp"
#include "viewer.hpp"

namespace nbody::viewer {

std::string window_unavailable() {
  return "this build has no window: GLFW was not found at configure time (scripts/install-deps.sh "
         "installs libglfw3-dev; then rebuild)";
}

struct Window::Impl {};
Window::Window(const WindowOptions&, const Scene&) { throw Unavailable(window_unavailable()); }
Window::~Window() = default;
void Window::set_scene(const Scene&) {}
bool Window::closing() const { return true; }
std::string Window::poll(bool) { return ""; }
Camera& Window::camera() { throw Unavailable(window_unavailable()); }
const std::string& Window::renderer() const { throw Unavailable(window_unavailable()); }
void Window::reserve(int, int) {}
unsigned Window::position_buffer(int) const { return 0; }
unsigned Window::velocity_buffer(int) const { return 0; }
void Window::upload(int, const Bodies&) {}
void Window::set_divergence(const Divergence&) {}
void Window::draw(const std::vector<Pane>&, Colour, bool, const std::string&) {}
void Window::show() {}
std::string Window::png() { return ""; }

}  // namespace nbody::viewer
