// The face detector behind FacesPlugin: OpenCV's objdetect cascades, which Debian ships in
// opencv-data, so nothing is downloaded at run time. C++ stays in this file: Swift sees only
// ph_faces.h's C functions.
#include "ph_faces.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

namespace {

#ifndef PH_OPENCV_DATA
#define PH_OPENCV_DATA "/usr/share/opencv4"
#endif

// LBP-improved is fast (about 20 ms on 320 px) and finds turned and small faces; alt2 is slow
// on a whole image but precise, so it only checks the LBP's candidates, each a small crop.
const char *const finder_path = PH_OPENCV_DATA "/lbpcascades/lbpcascade_frontalface.xml";
const char *const checker_path = PH_OPENCV_DATA "/haarcascades/haarcascade_frontalface_alt2.xml";

struct Cascades {
    cv::CascadeClassifier finder, checker;
    std::string problem;

    Cascades() {
        cv::setNumThreads(0);
        if (!finder.load(finder_path)) problem = std::string("cannot load ") + finder_path + " (install opencv-data)";
        else if (!checker.load(checker_path))
            problem = std::string("cannot load ") + checker_path + " (install opencv-data)";
    }
};

// A CascadeClassifier keeps state while it detects, so each thread has its own pair, loaded
// on first use (a few milliseconds).
Cascades &cascades() {
    thread_local Cascades each;
    return each;
}

std::atomic<long> detections{0};

void set_error(char *error, size_t size, const std::string &message) {
    if (error && size) std::snprintf(error, size, "%s", message.c_str());
}

} // namespace

extern "C" int ph_faces_check(char *error, size_t error_size) {
    try {
        Cascades &loaded = cascades();
        if (!loaded.problem.empty()) {
            set_error(error, error_size, loaded.problem);
            return -1;
        }
        return 0;
    } catch (const std::exception &e) {
        set_error(error, error_size, e.what());
        return -1;
    }
}

extern "C" int ph_faces_detect(const unsigned char *pixels, int width, int height, int bands, ph_face_box *boxes,
                               int capacity, char *error, size_t error_size) {
    try {
        Cascades &loaded = cascades();
        if (!loaded.problem.empty()) {
            set_error(error, error_size, loaded.problem);
            return -1;
        }
        if (width < 1 || height < 1 || (bands != 1 && bands != 3 && bands != 4)) {
            set_error(error, error_size, "faces: expects a grey, RGB or RGBA image");
            return -1;
        }
        detections++;
        cv::Mat source(height, width, CV_8UC(bands), const_cast<unsigned char *>(pixels));
        cv::Mat grey;
        if (bands == 1) grey = source.clone();
        else cv::cvtColor(source, grey, bands == 3 ? cv::COLOR_RGB2GRAY : cv::COLOR_RGBA2GRAY);
        cv::equalizeHist(grey, grey);

        // The LBP cascade is the cheap half: it proposes, and alt2 below decides. So a proposal
        // seen twice is kept (minNeighbors 1, not 3), its scales are 20% apart (not 15%), and its
        // windows start at 30 px (or 1/16 of the shorter side), not 24: two thirds of the time.
        // On astronauts of 26 to 70 px pasted into 13 photos it finds every face from 46 px
        // (before: from 42), 10 of 13 at 38 (11), 7 of 13 at 34 (4), none under 30 (4 of 13 at
        // 26), and no face in 52 photos without one, as before.
        int smallest = std::max(30, std::min(width, height) / 16);
        std::vector<cv::Rect> candidates;
        loaded.finder.detectMultiScale(grey, candidates, 1.2, 1, 0, cv::Size(smallest, smallest));

        std::vector<cv::Rect> faces;
        for (const cv::Rect &candidate : candidates) {
            // The candidate with a margin of a quarter each side: alt2 must find a face there of
            // at least half the candidate's size.
            int margin = candidate.width / 4;
            cv::Rect around = cv::Rect(candidate.x - margin, candidate.y - margin, candidate.width + 2 * margin,
                                       candidate.height + 2 * margin) &
                              cv::Rect(0, 0, width, height);
            std::vector<cv::Rect> agreed;
            int least = std::max(20, candidate.width / 2);
            loaded.checker.detectMultiScale(grey(around), agreed, 1.1, 2, 0, cv::Size(least, least));
            if (!agreed.empty()) faces.push_back(candidate);
        }
        std::sort(faces.begin(), faces.end(), [](const cv::Rect &a, const cv::Rect &b) { return a.area() > b.area(); });
        // One face found at two scales: a box mostly inside a larger one is the same face.
        std::vector<cv::Rect> distinct;
        for (const cv::Rect &face : faces) {
            bool inside = false;
            for (const cv::Rect &kept : distinct) inside = inside || (face & kept).area() * 2 > face.area();
            if (!inside) distinct.push_back(face);
        }
        faces = distinct;
        int count = std::min<int>(capacity, (int)faces.size());
        for (int i = 0; i < count; i++) boxes[i] = {faces[i].x, faces[i].y, faces[i].width, faces[i].height};
        return count;
    } catch (const std::exception &e) {
        set_error(error, error_size, std::string("faces: ") + e.what());
        return -1;
    } catch (...) {
        set_error(error, error_size, "faces: OpenCV failed");
        return -1;
    }
}

extern "C" long ph_faces_detections(void) { return detections.load(); }
