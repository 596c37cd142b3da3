"""The published numbers of [Byun07] that the satellite reproduction compares against.

Chapter 4: Tables 4.1-4.3 (400 HTTP connections, 20 minutes, drop marking). Chapter 5:
Tables 5.1-5.2 (500 HTTP connections and three UDP CBR flows). Chapter 6: Tables 6.1-6.3
(15 minutes, buffer flow control FC1-FC5 and drop marking). Units: b/s, packets, counts.
"""

from __future__ import annotations

CH4_SCHEMES = ["RED 1", "RED 2", "RED 3", "RED 4", "AVQ", "AVQRED"]
CH5_SCHEMES = ["RED 1", "RED 2", "RED 3", "RED 4", "SRED 1", "SRED 2", "AVQ", "AVQRED", "PFAVQRED"]
CH6_CASES = [f"{s} FC {k}" for s in ("RED", "AVQRED") for k in range(1, 6)] + [
    "RED (drop)",
    "AVQRED (drop)",
]

CH4_UTIL = {  # Table 4.1: mean [b/s], std [b/s]
    "RED 1": (19.8e6, 135e3),
    "RED 2": (19.8e6, 117e3),
    "RED 3": (19.8e6, 108e3),
    "RED 4": (19.8e6, 107e3),
    "AVQ": (19.5e6, 49e3),
    "AVQRED": (19.7e6, 47e3),
}
CH4_QUEUE = {  # Table 4.2: mean, std [packets]
    "RED 1": (63.39, 36.59),
    "RED 2": (59.15, 33.42),
    "RED 3": (63.54, 30.79),
    "RED 4": (59.91, 30.34),
    "AVQ": (20.45, 21.81),
    "AVQRED": (29.62, 25.11),
}
CH4_DROPS = {  # Table 4.3: total drops in 20 minutes
    "RED 1": 486_932,
    "RED 2": 491_798,
    "RED 3": 492_025,
    "RED 4": 492_999,
    "AVQ": 484_639,
    "AVQRED": 484_582,
}
CH4_DROP_FRACTION = 0.185
"""About 404-411 drops/s against about 1,760 delivered packets/s (derived from Table 4.3)."""

CH5_DROPS = {  # Table 5.1
    "RED 1": 465_052,
    "RED 2": 464_273,
    "RED 3": 466_136,
    "RED 4": 466_416,
    "SRED 1": 466_772,
    "SRED 2": 515_847,
    "AVQ": 450_021,
    "AVQRED": 450_010,
    "PFAVQRED": 631_931,
}
CH5_FLOW_STD = {  # Table 5.2: std of per-flow throughput across 503 flows [b/s]
    "RED 1": 51_161,
    "RED 2": 39_841,
    "RED 3": 39_640,
    "RED 4": 47_892,
    "SRED 1": 55_953,
    "SRED 2": 37_189,
    "AVQ": 42_351,
    "AVQRED": 45_793,
    "PFAVQRED": 18_150,
}
FAIR_SHARE_BPS = 20e6 / 503

CH6_OUT = {  # Table 6.1: output link mean, std [b/s]
    "RED FC 1": (19_976_464, 32_300),
    "RED FC 2": (19_710_622, 169_424),
    "RED FC 3": (17_491_225, 503_592),
    "RED FC 4": (15_351_695, 627_044),
    "RED FC 5": (15_006_684, 1_434_812),
    "AVQRED FC 1": (19_834_171, 213_647),
    "AVQRED FC 2": (19_181_604, 379_949),
    "AVQRED FC 3": (16_633_357, 809_237),
    "AVQRED FC 4": (14_672_899, 832_690),
    "AVQRED FC 5": (14_580_907, 1_916_090),
    "RED (drop)": (19_966_805, 34_937),
    "AVQRED (drop)": (19_715_454, 204_944),
}
CH6_IN = {  # Table 6.2: input link mean, std [b/s]
    "RED FC 1": (20_124_689, 372_613),
    "RED FC 2": (19_840_931, 325_317),
    "RED FC 3": (17_592_220, 540_831),
    "RED FC 4": (15_441_918, 660_253),
    "RED FC 5": (15_180_693, 2_112_514),
    "AVQRED FC 1": (19_981_757, 277_339),
    "AVQRED FC 2": (19_300_427, 359_035),
    "AVQRED FC 3": (16_729_259, 757_070),
    "AVQRED FC 4": (14_798_855, 837_137),
    "AVQRED FC 5": (14_819_918, 1_980_519),
    "RED (drop)": (24_823_058, 1_009_220),
    "AVQRED (drop)": (24_447_902, 860_513),
}
CH6_QUEUE = {  # Table 6.3: transmit queue mean, std [packets]
    "RED FC 1": (157.52, 90.09),
    "RED FC 2": (119.59, 90.48),
    "RED FC 3": (81.68, 91.61),
    "RED FC 4": (45.17, 63.65),
    "RED FC 5": (158.26, 271.02),
    "AVQRED FC 1": (213.21, 162.41),
    "AVQRED FC 2": (78.12, 77.17),
    "AVQRED FC 3": (47.13, 62.68),
    "AVQRED FC 4": (27.38, 45.26),
    "AVQRED FC 5": (153.06, 259.57),
    "RED (drop)": (55.81, 30.49),
    "AVQRED (drop)": (28.48, 23.05),
}
CH6_DROP_P = {"RED (drop)": 0.167, "AVQRED (drop)": 0.181}
"""The only marking probabilities the text gives: drop mode's averages [Byun07, §6.4]."""
