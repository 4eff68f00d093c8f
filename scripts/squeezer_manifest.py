#!/usr/bin/env python3
"""Writes tests/manifests/squeezer.json (run from the repository root; the JSON is committed, this
script shows how its numbers were made).

Andrews' squeezer, the seven-body planar mechanism of Schiehlen's multibody benchmark set as
Hairer & Wanner give it (Solving ODEs II, Sect. VII.7, Eq. 7.11; the IVP test set of Mazzia and
Magherini, problem "andrews"): seven links joined by revolutes, a driving torque mom on the crank
O-F, a spring c0 between D on the triangle and the ground point C, no gravity. Their coordinates
are the angles beta (crank), Theta (F-E relative to the crank), gamma (triangle about B), Phi
(E-G relative to G-A), delta (G-A about A), Omega (H-E relative to A-H), epsilon (A-H about A);
their constraint equations place the common pin E four ways:
  E = O + rr (cos b, sin b) - d (cos(b+T), sin(b+T))          (crank, coupler)
    = B + ss (sin g, -cos g)                                   (triangle)
    = A + zt (cos de, sin de) + e (sin(P+de), -cos(P+de))      (G-A, then E-G)
    = A + u (sin ep, -cos ep) + zf (cos(O+ep), sin(O+ep))      (A-H, then H-E)
and their mass matrix the centres of mass used below (crank: ra from O; coupler: da from F
towards E; E-G: e - ea from G; H-E: zf - fa from H; triangle, G-A and A-H turn about a fixed pivot,
so only their distances sqrt(sa^2 + sb^2), sqrt(ta^2 + tb^2), sqrt(ua^2 + ub^2) matter: the
direction chosen here does not change the motion). The spring acts at D = B + sd (cos g, sin g)
+ sc (sin g, -cos g). Inertias i_k about the centre of mass are the z moments; the others are set
equal to them (a planar motion never feels them).

Here every body is a spatial rigid body placed at the published initial angles, every pin a
revolute about z: ten revolutes for seven bodies, which in space are 50 equations of which 9 are
redundant (the out-of-plane ones of the three closed loops). `"planar": true` (the tests set it)
makes the same description the minimal one. The published solution at t = 0.03 s (PSIDE at 1e-14)
is in tests/unit/constraints.cpp. ali3p's default penalty (alpha = 1e12) is too stiff for these
masses at h = 1e-4 s (alpha h^2/4 = 2500 against rotational masses of 1e-6 kg m^2: its Newton
iteration diverges at t = 0.011 s, and says so); the manifest sets 1e11.
"""
import json, math

m = [.04325, .00365, .02373, .00706, .07050, .00706, .05498]
I = [2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5]
xa, ya, xb, yb, xc, yc = -.06934, -.00227, -.03635, .03273, .014, .072
d, da, e, ea, rr, ra = 28e-3, 115e-4, 2e-2, 1421e-5, 7e-3, 92e-5
ss, sa, sb, sc, sd = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
ta, tb, u, ua, ub = 2308e-5, 916e-5, 4e-2, 1228e-5, 449e-5
zf, zt, fa, mom, c0, l0 = 2e-2, 4e-2, 1421e-5, 33e-3, 4530.0, 0.07785
b, T, g, P, de, Om, ep = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
                          0.222668390165885884674473185609, 0.487364979543842550225598953530,
                          -0.222668390165885884674473185609, 1.23054744454982119249735015568)

def add(*vs):
    return [sum(v[i] for v in vs) for i in range(2)]

def sc_(k, x, y):
    return [k * x, k * y]

O, A, B, C = [0.0, 0.0], [xa, ya], [xb, yb], [xc, yc]
F = sc_(rr, math.cos(b), math.sin(b))
E = add(F, sc_(-d, math.cos(b + T), math.sin(b + T)))
G = add(A, sc_(zt, math.cos(de), math.sin(de)))
H = add(A, sc_(u, math.sin(ep), -math.cos(ep)))
E3 = add(B, sc_(ss, math.sin(g), -math.cos(g)))
E4 = add(G, sc_(e, math.sin(P + de), -math.cos(P + de)))
E6 = add(H, sc_(zf, math.cos(Om + ep), math.sin(Om + ep)))
for other in (E3, E4, E6):
    assert math.dist(E, other) < 1e-15, (E, other)
D = add(B, sc_(sd, math.cos(g), math.sin(g)), sc_(sc, math.sin(g), -math.cos(g)))
centres = [
    sc_(ra, math.cos(b), math.sin(b)),
    add(F, sc_(-da, math.cos(b + T), math.sin(b + T))),
    add(B, sc_(sa, math.sin(g), -math.cos(g)), sc_(sb, math.cos(g), math.sin(g))),
    add(G, sc_(e - ea, math.sin(P + de), -math.cos(P + de))),
    add(A, sc_(ta, math.cos(de), math.sin(de)), sc_(tb, -math.sin(de), math.cos(de))),
    add(H, sc_(zf - fa, math.cos(Om + ep), math.sin(Om + ep))),
    add(A, sc_(ua, math.sin(ep), -math.cos(ep)), sc_(ub, math.cos(ep), math.sin(ep))),
]
names = ["crank", "coupler", "triangle", "EG", "GA", "HE", "AH"]
docs = ["O-F, beta", "F-E, beta + Theta", "B-D-E, gamma", "G-E, Phi + delta", "A-G, delta", "H-E, Omega + epsilon",
        "A-H, epsilon"]

def p3(x):
    return [x[0], x[1], 0.0]

def revolute(name, i, j, at):
    return {"name": name, "type": "revolute", "bodies": [i, j], "point": p3(at), "axis": [0, 0, 1]}

desc = {
    "doc": "Andrews' squeezer (Hairer & Wanner II, Sect. VII.7), written by scripts/squeezer_manifest.py",
    "bodies": [{"name": n, "mass": m[k], "inertia": [I[k]] * 3, "position": p3(centres[k]), "doc": docs[k]}
               for k, n in enumerate(names)],
    "joints": [
        revolute("O", "ground", "crank", O), revolute("F", "crank", "coupler", F),
        revolute("B", "ground", "triangle", B), revolute("E_triangle", "coupler", "triangle", E),
        revolute("E_EG", "coupler", "EG", E), revolute("E_HE", "coupler", "HE", E),
        revolute("G", "EG", "GA", G), revolute("A_GA", "ground", "GA", A),
        revolute("A_AH", "ground", "AH", A), revolute("H", "HE", "AH", H),
    ],
    "forces": [
        {"type": "joint_effort", "name": "drive", "joint": "O", "value": mom},
        {"type": "spring_damper", "name": "spring", "bodies": ["ground", "triangle"], "points": [p3(C), p3(D)],
         "stiffness": c0, "length": l0},
    ],
    "points": [{"name": "F", "body": "crank", "point": p3(F)}, {"name": "E", "body": "coupler", "point": p3(E)}],
}
manifest = {
    "format": 1,
    "title": "Andrews' squeezer: seven bodies, ten revolutes (9 redundant equations in space), driving torque and spring, 0.03 s",
    "variables": {"h": 1e-4},
    "subsystems": {"squeezer": {"plugin": "mechanism", "parameters": {"description": desc}, "step": "$h",
                                "formulation": {"plugin": "ali3p", "parameters": {"alpha": 1e11}}}},
    "connections": [],
    "coupling": {"scheme": "jacobi", "macro_step": "$h", "start": 0.0, "end": 0.03},
    "record": {"interval": 1e-3, "variables": ["squeezer.F", "squeezer.E"]},
    "output": "out/squeezer",
}
with open("tests/manifests/squeezer.json", "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
