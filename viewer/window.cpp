// The window of `nbody view`: GLFW, one or two panes, a shared orbit camera, HUD text. Its GL
// context is adopted as the process's context (context.hpp), so the gl:* rungs run in it and are
// drawn from their own position textures, with no read-back.
#include <GL/glew.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "context.hpp"
#include "error.hpp"
#include "render.hpp"
#include "viewer.hpp"

namespace nbody::viewer {

using namespace nbody::gl;  // the GL context and objects the window draws with

std::string window_unavailable() { return ""; }

namespace {

std::string g_glfw_error;  // GLFW's last error, for messages

void on_glfw_error(int code, const char* text) {
  g_glfw_error = std::string(text ? text : "unknown error") + " (GLFW error " + std::to_string(code) + ")";
}

}  // namespace

struct Window::Impl {
  GLFWwindow* window = nullptr;
  Scene scene;
  Camera camera;
  std::string renderer, keys;
  bool dragging = false;
  double last_x = 0, last_y = 0;
  std::unique_ptr<BodyRenderer> bodies;
  std::unique_ptr<CellRenderer> cells;
  std::unique_ptr<Overlay> overlay;
  std::unique_ptr<BodyBuffers> buffers[2];
  GLuint divergence_buffer = 0, divergence_texture = 0;
  Divergence divergence;
  int width = 0, height = 0;  // of the last frame drawn, in pixels
  bool glfw = false;          // glfwInit succeeded (a window); false: offscreen
  Texture target;             // offscreen: the frame, drawn through `fbo`
  Framebuffer fbo;

  ~Impl() {
    bodies.reset();
    cells.reset();
    overlay.reset();
    for (auto& b : buffers) b.reset();
    if (divergence_texture) glDeleteTextures(1, &divergence_texture);
    if (divergence_buffer) glDeleteBuffers(1, &divergence_buffer);
    target = Texture();
    fbo = Framebuffer();
    if (window) glfwDestroyWindow(window);
    if (glfw) glfwTerminate();
  }
  static Impl& of(GLFWwindow* w) { return *static_cast<Impl*>(glfwGetWindowUserPointer(w)); }
};

Window::Window(const WindowOptions& options, const Scene& scene) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.scene = scene;
  m.camera = scene.camera;
  if (options.offscreen) {  // the headless EGL context and a framebuffer object of the window's size
    m.renderer = context().renderer;
    m.width = options.width, m.height = options.height;
    m.target = Texture({"offscreen frame", m.width, m.height, GL_RGBA8, nullptr});
    m.fbo = Framebuffer(m.target);
    m.bodies = std::make_unique<BodyRenderer>();
    m.cells = std::make_unique<CellRenderer>();
    m.overlay = std::make_unique<Overlay>();
    glGenBuffers(1, &m.divergence_buffer);
    glGenTextures(1, &m.divergence_texture);
    return;
  }
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland))
    throw Unavailable("no display (DISPLAY is not set); `nbody view --frame-count K --offscreen --screenshot F.png` "
                      "or `nbody run --frames K --out DIR` render headless");
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) throw Unavailable("no window: " + g_glfw_error);
  m.glfw = true;
  // The newest core context we use first (gl:compute needs 4.3), down to the force quad's 3.3.
  const int versions[][2] = {{4, 5}, {4, 3}, {3, 3}};
  for (const auto& v : versions) {
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, v[0]);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, v[1]);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    // Colour only: no depth, stencil or alpha planes are drawn (additive sprites, 2-D text), and
    // asking for none lets GLX find a config on servers that offer few (Xvfb beside the NVIDIA driver).
    glfwWindowHint(GLFW_DEPTH_BITS, 0);
    glfwWindowHint(GLFW_STENCIL_BITS, 0);
    glfwWindowHint(GLFW_ALPHA_BITS, 0);
    m.window = glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr, nullptr);
    if (m.window) break;
  }
  if (!m.window) {
    const std::string why = g_glfw_error;
    impl_.reset();
    throw Unavailable("no window: " + why);
  }
  glfwMakeContextCurrent(m.window);
  glfwSwapInterval(options.vsync ? 1 : 0);
  m.renderer = adopt_current_context("GLFW window").renderer;
  glfwSetWindowUserPointer(m.window, &m);
  glfwSetCharCallback(m.window, [](GLFWwindow* w, unsigned int c) {
    if (c < 128) Impl::of(w).keys += static_cast<char>(c);
  });
  glfwSetKeyCallback(m.window, [](GLFWwindow* w, int key, int, int action, int) {
    if (key == GLFW_KEY_ESCAPE && action == GLFW_PRESS) Impl::of(w).keys += '\x1b';
  });
  glfwSetMouseButtonCallback(m.window, [](GLFWwindow* w, int button, int action, int) {
    Impl& s = Impl::of(w);
    if (button != GLFW_MOUSE_BUTTON_LEFT) return;
    s.dragging = action == GLFW_PRESS;
    glfwGetCursorPos(w, &s.last_x, &s.last_y);
  });
  glfwSetCursorPosCallback(m.window, [](GLFWwindow* w, double x, double y) {
    Impl& s = Impl::of(w);
    if (!s.dragging) return;
    s.camera.yaw += 0.3 * (x - s.last_x);
    s.camera.tilt = std::clamp(s.camera.tilt + 0.3 * (y - s.last_y), -180.0, 180.0);
    s.last_x = x, s.last_y = y;
  });
  glfwSetScrollCallback(m.window, [](GLFWwindow* w, double, double dy) {
    Impl::of(w).camera.radius *= std::pow(0.9, dy);
  });
  m.bodies = std::make_unique<BodyRenderer>();
  m.cells = std::make_unique<CellRenderer>();
  m.overlay = std::make_unique<Overlay>();
  glGenBuffers(1, &m.divergence_buffer);
  glGenTextures(1, &m.divergence_texture);
}

Window::~Window() = default;

void Window::set_scene(const Scene& scene) {
  impl_->scene = scene;
  impl_->camera = scene.camera;
}

bool Window::closing() const { return impl_->window && glfwWindowShouldClose(impl_->window); }

std::string Window::poll(bool wait) {
  if (!impl_->window) return "";
  if (wait)
    glfwWaitEventsTimeout(0.1);
  else
    glfwPollEvents();
  std::string k;
  std::swap(k, impl_->keys);
  return k;
}

Camera& Window::camera() { return impl_->camera; }
const std::string& Window::renderer() const { return impl_->renderer; }

void Window::reserve(int pane, int bodies) {
  auto& b = impl_->buffers[pane & 1];
  if (!b) b = std::make_unique<BodyBuffers>();
  b->reserve(bodies);
}

unsigned Window::position_buffer(int pane) const { return impl_->buffers[pane & 1]->position_buffer(); }
unsigned Window::velocity_buffer(int pane) const { return impl_->buffers[pane & 1]->velocity_buffer(); }

void Window::upload(int pane, const Bodies& bodies) {
  reserve(pane, static_cast<int>(bodies.size()));
  impl_->buffers[pane & 1]->upload(bodies);
}

void Window::set_divergence(const Divergence& d) {
  Impl& m = *impl_;
  m.divergence = d;
  glBindBuffer(GL_TEXTURE_BUFFER, m.divergence_buffer);
  glBufferData(GL_TEXTURE_BUFFER, static_cast<GLsizeiptr>(std::max<std::size_t>(d.log10_distance.size(), 1) * 4),
               d.log10_distance.empty() ? nullptr : d.log10_distance.data(), GL_DYNAMIC_DRAW);
  glBindTexture(GL_TEXTURE_BUFFER, m.divergence_texture);
  glTexBuffer(GL_TEXTURE_BUFFER, GL_R32F, m.divergence_buffer);
  glBindBuffer(GL_TEXTURE_BUFFER, 0);
  check_gl("uploading the divergence of " + std::to_string(d.log10_distance.size()) + " bodies");
}

void Window::draw(const std::vector<Pane>& panes, Colour colour, bool help, const std::string& footer) {
  Impl& m = *impl_;
  if (m.window) glfwGetFramebufferSize(m.window, &m.width, &m.height);
  glBindFramebuffer(GL_FRAMEBUFFER, m.window ? 0 : m.fbo.id());
  glViewport(0, 0, m.width, m.height);
  glClearColor(0, 0, 0, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  const int count = std::max<int>(static_cast<int>(panes.size()), 1);
  const float pane_w = static_cast<float>(m.width) / static_cast<float>(count);
  for (int k = 0; k < static_cast<int>(panes.size()); ++k) {
    const Pane& p = panes[static_cast<std::size_t>(k)];
    const BodySource source = p.textured ? BodySource::textures_of(*p.pipeline) : BodySource{nullptr, m.buffers[k & 1].get()};
    const int x0 = static_cast<int>(static_cast<float>(k) * pane_w);
    const int x1 = static_cast<int>(static_cast<float>(k + 1) * pane_w);
    if (source.textured || source.buffers)
      m.bodies->draw(source, m.scene, m.camera, colour, {x0, 0, x1 - x0, m.height}, m.divergence_texture,
                     m.divergence.lo, m.divergence.hi);
    m.cells->draw(p.cells, m.camera, {x0, 0, x1 - x0, m.height});
    Overlay& o = *m.overlay;
    if (k > 0) o.rect(static_cast<float>(x0), 0, 2, static_cast<float>(m.height), {0.5f, 0.5f, 0.5f, 1});
    float widest = 0;
    for (const std::string& line : p.hud)
      widest = std::max(widest, 1.5f * 6.0f * static_cast<float>(line.size()));
    o.rect(static_cast<float>(x0) + 4, 4, widest + 12,
           Overlay::line_height() * static_cast<float>(p.hud.size()) + 8, {0, 0, 0, 0.6f});
    float y = 8;
    for (std::size_t i = 0; i < p.hud.size(); ++i)
      y = o.text(static_cast<float>(x0) + 10, y, p.hud[i], i == 0 ? std::array<float, 3>{1, 1, 1}
                                                                  : std::array<float, 3>{0.8f, 0.85f, 0.9f});
  }
  Overlay& o = *m.overlay;
  // The colour bar: right edge, below the HUD (which ends near y = 100 at 5 lines).
  if (colour == Colour::Divergence && panes.size() > 1) {
    const float top = Overlay::line_height() * 7 + 8, h = std::max(40.0f, static_cast<float>(m.height) * 0.4f);
    if (m.divergence.identical)
      o.text(static_cast<float>(m.width) - 250, top, "distance to twin: 0 (identical)");
    else
      o.colour_bar(static_cast<float>(m.width) - 70, top, 16, h, m.divergence.lo, m.divergence.hi, "distance to twin");
  }
  if (!footer.empty()) o.text(10, static_cast<float>(m.height) - Overlay::line_height() - 6, footer, {0.7f, 0.7f, 0.7f});
  if (help) {
    static const char* lines[] = {"keys",
                                  "space   pause / run",
                                  ".       one step (paused)",
                                  "r       reset to the initial state",
                                  "c       colour: plain, speed, species, divergence",
                                  "[ ]     halve / double dt",
                                  "f       fit the view",
                                  "p       screenshot (PNG)",
                                  "t       the tree's cells: on / off",
                                  "drag    orbit;  wheel: zoom",
                                  "h       this help;  Esc: quit"};
    const float w = 470, h = Overlay::line_height() * 11 + 16;
    const float x = (static_cast<float>(m.width) - w) / 2, y0 = (static_cast<float>(m.height) - h) / 2;
    o.rect(x, y0, w, h, {0, 0, 0, 0.8f});
    float y = y0 + 8;
    for (const char* line : lines) y = o.text(x + 12, y, line);
  }
  o.flush(m.width, m.height);
}

// Offscreen, a frame is shown when it is finished: glFinish stands where the swap would be.
void Window::show() {
  if (impl_->window)
    glfwSwapBuffers(impl_->window);
  else
    glFinish();
}

std::string Window::png() {
  glBindFramebuffer(GL_FRAMEBUFFER, impl_->window ? 0 : impl_->fbo.id());
  glReadBuffer(impl_->window ? GL_BACK : GL_COLOR_ATTACHMENT0);
  return read_png(0, 0, impl_->width, impl_->height);
}

}  // namespace nbody::viewer
