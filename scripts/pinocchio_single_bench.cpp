// Pinocchio's single calls in a C++ loop, for scripts/bench-batch-vs-pinocchio.py: ns per state
// of rnea, aba, crba, computeMinverse, forwardKinematics, computeGeneralizedGravity and
// computeJointJacobians cycling over 1024 states (q = integrate(neutral, v0), v0, v, a uniform
// in ±1), the fastest of --rounds rounds of thread CPU time. One JSON line per algorithm.
//
//     pinocchio_single_bench MODEL.txt [--rounds 15] [--time 0.2]
//
// MODEL.txt: the joints of `pin.buildModelFromUrdf(...)` written by
// scripts/bench-batch-vs-pinocchio.py, which builds this with g++ against the pin wheel's
// headers and library and the cmeel-eigen wheel's headers.
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <fstream>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

static double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  std::string path = argv[1];
  int rounds = 15;
  double budget = 0.2;
  for (int k = 2; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--rounds")) rounds = std::atoi(argv[++k]);
    if (!std::strcmp(argv[k], "--time")) budget = std::atof(argv[++k]);
  }
  // the model as pin.buildModelFromUrdf built it, one joint a line (the wheel's headers have no
  // urdfdom to parse URDF, nor boost serialization): kind parent placement(R row-major, p)
  // mass com inertia(xx xy xz yy yz zz) [axis]
  pinocchio::Model model;
  std::ifstream in(path);
  std::string kind;
  while (in >> kind) {
    int parent;
    double r[9], p[3], mass, c[3], I[6];
    in >> parent;
    for (double& x : r) in >> x;
    for (double& x : p) in >> x;
    in >> mass >> c[0] >> c[1] >> c[2];
    for (double& x : I) in >> x;
    Eigen::Vector3d axis(0, 0, 0);
    if (kind == "JointModelPrismaticUnaligned" || kind == "JointModelRevoluteUnaligned") in >> axis[0] >> axis[1] >> axis[2];
    Eigen::Matrix3d R;
    R << r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8];
    pinocchio::SE3 placement(R, Eigen::Vector3d(p[0], p[1], p[2]));
    pinocchio::JointIndex j;
    std::string name = "j" + std::to_string(model.njoints);
    if (kind == "JointModelRX") j = model.addJoint(parent, pinocchio::JointModelRX(), placement, name);
    else if (kind == "JointModelRY") j = model.addJoint(parent, pinocchio::JointModelRY(), placement, name);
    else if (kind == "JointModelRZ") j = model.addJoint(parent, pinocchio::JointModelRZ(), placement, name);
    else if (kind == "JointModelPX") j = model.addJoint(parent, pinocchio::JointModelPX(), placement, name);
    else if (kind == "JointModelPY") j = model.addJoint(parent, pinocchio::JointModelPY(), placement, name);
    else if (kind == "JointModelPZ") j = model.addJoint(parent, pinocchio::JointModelPZ(), placement, name);
    else if (kind == "JointModelFreeFlyer") j = model.addJoint(parent, pinocchio::JointModelFreeFlyer(), placement, name);
    else if (kind == "JointModelPrismaticUnaligned") j = model.addJoint(parent, pinocchio::JointModelPrismaticUnaligned(axis), placement, name);
    else if (kind == "JointModelRevoluteUnaligned") j = model.addJoint(parent, pinocchio::JointModelRevoluteUnaligned(axis), placement, name);
    else { std::fprintf(stderr, "joint kind %s not handled\n", kind.c_str()); return 1; }
    Eigen::Matrix3d Ic;
    Ic << I[0], I[1], I[2], I[1], I[3], I[4], I[2], I[4], I[5];
    model.appendBodyToJoint(j, pinocchio::Inertia(mass, Eigen::Vector3d(c[0], c[1], c[2]), Ic));
  }
  model.name = path.substr(path.find_last_of('/') + 1);
  pinocchio::Data data(model);
  const int n = 1024;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto rand_v = [&]() {
    Eigen::VectorXd x(model.nv);
    for (int i = 0; i < model.nv; ++i) x[i] = u(rng);
    return x;
  };
  std::vector<Eigen::VectorXd> qs, vs, as;
  for (int s = 0; s < n; ++s) {
    qs.push_back(pinocchio::integrate(model, pinocchio::neutral(model), rand_v()));
    vs.push_back(rand_v());
    as.push_back(rand_v());
  }
  auto time = [&](const std::function<void(int)>& f) {
    double t0 = cpu_ns();
    for (int s = 0; s < n; ++s) f(s);
    double once = (cpu_ns() - t0) * 1e-9;
    int reps = std::max(1, int(budget / rounds / std::max(once, 1e-9)));
    double best = 1e300;
    for (int r = 0; r < rounds; ++r) {
      double t = cpu_ns();
      for (int k = 0; k < reps; ++k)
        for (int s = 0; s < n; ++s) f(s);
      best = std::min(best, (cpu_ns() - t) / (double(reps) * n));
    }
    return best;
  };
  double sink = 0;
  std::vector<std::pair<const char*, std::function<void(int)>>> algos = {
      {"rnea", [&](int s) { sink += pinocchio::rnea(model, data, qs[s], vs[s], as[s])[0]; }},
      {"aba", [&](int s) { sink += pinocchio::aba(model, data, qs[s], vs[s], as[s])[0]; }},
      {"crba", [&](int s) { sink += pinocchio::crba(model, data, qs[s])(0, 0); }},
      {"minv", [&](int s) { sink += pinocchio::computeMinverse(model, data, qs[s])(0, 0); }},
      {"fk", [&](int s) { pinocchio::forwardKinematics(model, data, qs[s]); sink += data.oMi.back().translation()[0]; }},
      {"gravity", [&](int s) { sink += pinocchio::computeGeneralizedGravity(model, data, qs[s])[0]; }},
      {"jacobians", [&](int s) { sink += pinocchio::computeJointJacobians(model, data, qs[s])(0, 0); }},
  };
  for (auto& [name, f] : algos)
    std::printf("{\"robot\": \"%s\", \"algo\": \"%s\", \"pinocchio_single\": %.1f}\n", model.name.c_str(), name, time(f));
  std::fprintf(stderr, "%g\n", sink);
  return 0;
}
