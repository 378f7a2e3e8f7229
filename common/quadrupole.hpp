// A quadrupole cell: a tree cell's pull to second order, its mass M at its centre of mass c, and its second moment
// about c, for the softened gravity of every rung. Host and device code alike (cpu:tree in
// common/tree.cpp, cuda:tree in cuda_pipeline/tree_kernels.cuh), so both trees sum a cell alike.
//
// With S = sum_k m_k d_k d_k^T (d_k = x_k - c; the first moment is 0 about c), Q = 3S - tr(S) I its
// traceless part (Bonsai's and Ryoanji's quadrupole), r = c - x and D = (|r|^2 + eps^2)^(-1/2), the
// second-order Taylor expansion in d of the Plummer-softened potential -sum_k m_k / sqrt(|x_k - x|^2 +
// eps^2) is
//
//     phi(x) = -M D - (D^5 / 2) r.Q.r + (eps^2 tr S / 2) D^5
//     a(x)   =  M D^3 r - D^5 Q r + (5/2) D^7 (r.Q.r - eps^2 tr S) r
//
// At eps = 0 this is the textbook traceless quadrupole with 1/|r|; with eps > 0 the trace term is what
// the softening adds, so the expansion is of the kernel the rungs sum and not of bare 1/r. It holds
// where every body of the cell is nearer to c than the point is (|d_k| < |r|; the remainder falls as
// (bmax / |r|)^3): the opening test takes a cell whole only where theta |r| > bmax with theta <= 1,
// and opens every cell where that fails.
#pragma once

#include "host_device.hpp"

namespace nbody::quadrupole {

// S = sum m d d^T, summed in double: a leaf's from its bodies, a parent's from its children's
// (shifted to the parent's centre by the parallel-axis term m_c d_c d_c^T).
struct SecondMoment {
  double xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;

  // A mass m at d from the centre (a body, or a child's mass at its centre of mass).
  NBODY_HOST_DEVICE void add(double m, double dx, double dy, double dz) {
    xx += m * dx * dx, yy += m * dy * dy, zz += m * dz * dz;
    xy += m * dx * dy, xz += m * dx * dz, yz += m * dy * dz;
  }
  // A child's own moment about its centre (traceless q, as stored), added as it stands.
  NBODY_HOST_DEVICE void add_stored(const float q[6]) {
    const double tr = q[5];
    const double qzz = -static_cast<double>(q[0]) - q[1];
    xx += (q[0] + tr) / 3, yy += (q[1] + tr) / 3, zz += (qzz + tr) / 3;
    xy += q[2] / 3.0, xz += q[3] / 3.0, yz += q[4] / 3.0;
  }
  // As stored: Qxx, Qyy, Qxy, Qxz, Qyz (Qzz = -Qxx - Qyy) and tr S.
  NBODY_HOST_DEVICE void stored(float q[6]) const {
    const double tr = xx + yy + zz;
    q[0] = static_cast<float>(3 * xx - tr), q[1] = static_cast<float>(3 * yy - tr);
    q[2] = static_cast<float>(3 * xy), q[3] = static_cast<float>(3 * xz), q[4] = static_cast<float>(3 * yz);
    q[5] = static_cast<float>(tr);
  }
};

// The cell's terms of a(x) added to (ax, ay, az), given r = c - x and D = 1 / sqrt(|r|^2 + eps^2);
// q as stored, e2tr = eps^2 tr S. T is float in the rungs and double in the diagnostics' sums.
// [about 34 flops, against 20 for a body: D^2, D^3, D^5, D^7 4; Q r 9 + Qzz 1; r.Q.r 3; the
// coefficients 4; the sums 6; r and |r|^2 + eps^2 (the caller's) 6, the root 1]
template <typename T>
NBODY_HOST_DEVICE void add_acceleration(T rx, T ry, T rz, T d, T mass, const float q[6], T e2tr, T& ax, T& ay,
                                        T& az) {
  const T qxx = q[0], qyy = q[1], qxy = q[2], qxz = q[3], qyz = q[4], qzz = -(qxx + qyy);
  const T d2 = d * d, d3 = d * d2, d5 = d3 * d2, d7 = d5 * d2;
  const T qx = qxx * rx + qxy * ry + qxz * rz;
  const T qy = qxy * rx + qyy * ry + qyz * rz;
  const T qz = qxz * rx + qyz * ry + qzz * rz;
  const T rqr = rx * qx + ry * qy + rz * qz;
  const T along = mass * d3 + T(2.5) * d7 * (rqr - e2tr);
  ax += rx * along - d5 * qx;
  ay += ry * along - d5 * qy;
  az += rz * along - d5 * qz;
}

// The cell's term of phi(x), given r, D, q and e2tr as above.
template <typename T>
NBODY_HOST_DEVICE T potential(T rx, T ry, T rz, T d, T mass, const float q[6], T e2tr) {
  const T qxx = q[0], qyy = q[1], qxy = q[2], qxz = q[3], qyz = q[4], qzz = -(qxx + qyy);
  const T rqr = rx * (qxx * rx + qxy * ry + qxz * rz) + ry * (qxy * rx + qyy * ry + qyz * rz) +
                rz * (qxz * rx + qyz * ry + qzz * rz);
  const T d5 = d * d * d * d * d;
  return -mass * d - T(0.5) * d5 * (rqr - e2tr);
}

}  // namespace nbody::quadrupole
