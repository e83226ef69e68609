#!/usr/bin/python3
"""Writes gen300_job.csv: 300 jobs in the format of Tiresias' 60_job.csv (job_id, num_gpu,
submit_time, iterations, model_name, duration, interval), seeded, for the 2D-LAS comparisons of
scripts/peers/run-tiresias.sh: arrivals 25 s apart on average, 60 % of jobs on 1 GPU and the rest
gangs of 2, 4 and 8, log-normal durations (median 300 s) in whole seconds, the model names
Tiresias knows (models.py). The file is committed beside this script (run-tiresias.sh copies it
to the fixtures); this says how it was made:
  scripts/peers/tiresias/make_gen_trace.py > scripts/peers/tiresias/gen300_job.csv
"""
import math
import random

rng = random.Random(20261129)
models = ["vgg19", "vgg16", "vgg11", "alexnet", "resnet152", "resnet101", "resnet50", "inception4", "inception3"]
print("job_id,num_gpu,submit_time,iterations,model_name,duration,interval")
t = 0.0
for j in range(300):
    t += rng.expovariate(1 / 25.0)
    u = rng.random()
    gpus = 1 if u < 0.6 else 2 if u < 0.75 else 4 if u < 0.9 else 8
    duration = int(min(20000, max(10, round(math.exp(rng.gauss(math.log(300), 1.2))))))
    iterations = duration * rng.randint(2, 6)
    print("%d,%d,%d,%d,%s,%d,%d" % (j, gpus, int(t), iterations, rng.choice(models), duration, rng.randint(10, 40)))
