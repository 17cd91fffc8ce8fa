# SPDX-License-Identifier: MIT
"""bench/face_fastapi.py - the baseline of bench/face.pl: a Python FastAPI
service with OpenCV (Debian's python3-opencv, the same OpenCV 4.6 as the
C service) running the same model file with the same decoding
(doc/face-models.md): letterbox to 640, SCRFD decoded by output shape with
OpenCV's NMS, or YuNet through cv2.FaceDetectorYN.  POST /api/v1/detect
takes the multipart field `image` and answers the detections as JSON,
the way a typical FastAPI face service does.

Settings from the environment (bench/face.pl sets them):
  BENCH_FACE_MODEL  the .onnx file
  BENCH_FACE_KIND   scrfd or yunet
  BENCH_FACE_RAW    the raw score threshold (the model's knot: what the
                    C service's default confidence 0.5 stands for)
Run: python3 -m uvicorn face_fastapi:app --app-dir bench --workers 2
"""
import os
import time

import cv2
import numpy as np
from fastapi import FastAPI, File, HTTPException, UploadFile

DET = 640
NMS = 0.4
MODEL = os.environ["BENCH_FACE_MODEL"]
KIND = os.environ["BENCH_FACE_KIND"]
RAW = float(os.environ["BENCH_FACE_RAW"])

app = FastAPI()

if KIND == "yunet":
    detector = cv2.FaceDetectorYN.create(MODEL, "", (DET, DET), RAW, NMS, 5000)
else:
    net = cv2.dnn.readNetFromONNX(MODEL)
    names = net.getUnconnectedOutLayersNames()


def letterbox(img):
    h, w = img.shape[:2]
    s = min(DET / w, DET / h)
    nw, nh = max(1, min(DET, round(w * s))), max(1, min(DET, round(h * s)))
    out = np.zeros((DET, DET, 3), np.uint8)
    out[:nh, :nw] = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
    return out, s


def scrfd(img):
    canvas, s = letterbox(img)
    blob = cv2.dnn.blobFromImage(canvas, 1 / 128, (DET, DET),
                                 (127.5, 127.5, 127.5), swapRB=True)
    net.setInput(blob)
    outs = [o.reshape(-1, o.shape[-1]) for o in net.forward(names)]
    by = {}
    for o in outs:
        stride = next(st for st in (8, 16, 32)
                      if o.shape[0] == (DET // st) ** 2 * 2)
        by[(stride, o.shape[1])] = o
    boxes, scores, lms = [], [], []
    for st in (8, 16, 32):
        g = DET // st
        sc = by[(st, 1)][:, 0]
        idx = np.nonzero(sc >= RAW)[0]
        cx = (idx // 2 % g * st).astype(np.float32)
        cy = (idx // 2 // g * st).astype(np.float32)
        bb = by[(st, 4)][idx] * st
        kp = by[(st, 10)][idx] * st
        x1, y1 = (cx - bb[:, 0]) / s, (cy - bb[:, 1]) / s
        x2, y2 = (cx + bb[:, 2]) / s, (cy + bb[:, 3]) / s
        boxes += np.stack([x1, y1, x2 - x1, y2 - y1], 1).tolist()
        scores += sc[idx].tolist()
        kx = (kp[:, 0::2] + cx[:, None]) / s
        ky = (kp[:, 1::2] + cy[:, None]) / s
        lms += np.stack([kx, ky], 2).tolist()
    keep = cv2.dnn.NMSBoxes(boxes, scores, RAW, NMS) if boxes else []
    return [(boxes[i], scores[i], lms[i]) for i in np.array(keep).flatten()]


def yunet(img):
    canvas, s = letterbox(img)
    _, faces = detector.detect(canvas)
    out = []
    for f in faces if faces is not None else []:
        out.append(((f[:4] / s).tolist(), float(f[14]),
                    (f[4:14].reshape(5, 2) / s).tolist()))
    return out


@app.post("/api/v1/detect")
async def detect(image: UploadFile = File(...)):
    t0 = time.perf_counter()
    data = await image.read()
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise HTTPException(400, "cannot decode the image")
    t1 = time.perf_counter()
    found = yunet(img) if KIND == "yunet" else scrfd(img)
    t2 = time.perf_counter()
    names5 = ("left_eye", "right_eye", "nose", "left_mouth", "right_mouth")
    dets = [{
        "index": i,
        "bbox": {"x1": b[0], "y1": b[1], "x2": b[0] + b[2], "y2": b[1] + b[3]},
        "confidence": sc,
        "landmarks": {n: {"x": p[0], "y": p[1]} for n, p in zip(names5, lm)},
    } for i, (b, sc, lm) in enumerate(found)]
    return {
        "image": {"width": img.shape[1], "height": img.shape[0],
                  "size_bytes": len(data)},
        "detections": dets,
        "summary": {"face_count": len(dets)},
        "profiling": {"decode_ms": (t1 - t0) * 1000,
                      "inference_ms": (t2 - t1) * 1000,
                      "total_ms": (time.perf_counter() - t0) * 1000,
                      "opencv_version": cv2.__version__},
    }
