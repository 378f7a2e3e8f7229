// The GL this pipeline is written against: desktop GL 3.3+ core through GLEW natively, and in the
// browser build WebGL2 (OpenGL ES 3.0), where emscripten maps these calls onto the page's context.
// The fragment-shader rungs use only what both have; the compute rungs are desktop-only.
#pragma once
#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#define NBODY_GL_ES 1
#else
#include <GL/glew.h>
#endif
