#ifndef PH_FACES_H
#define PH_FACES_H

#include <stddef.h>
#include <vips/vips.h>

#ifdef __cplusplus
extern "C" {
#endif

// A face found in an image, in its pixels.
typedef struct {
    int x, y, width, height;
} ph_face_box;

// Finds frontal faces in an 8-bit image of `bands` interleaved samples a pixel (1 grey, 3 RGB,
// 4 RGBA), of at most a few hundred pixels a side: OpenCV's LBP cascade finds candidates,
// and its Haar cascade (alt2) must agree on each. Writes at most `capacity` boxes, largest
// first, and returns how many it found; -1 with `error` set when the cascades cannot be
// loaded or OpenCV fails. Never throws: OpenCV's exceptions stop here.
int ph_faces_detect(const unsigned char *pixels, int width, int height, int bands, ph_face_box *boxes, int capacity,
                    char *error, size_t error_size);

// Blurs each box of `in` (in one frame's pixels; every frame of an animation alike) with a
// Gaussian of `sigma` pixels, or of a sixth of the box's larger side when `sigma` is 0.
int ph_faces_blur(VipsImage *in, const ph_face_box *boxes, int count, double sigma, VipsImage **out);

// How many images this process has searched for faces.
long ph_faces_detections(void);

// 0 when both cascades load, else -1 with `error` naming the file that does not.
int ph_faces_check(char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
