import ArgumentParser; import StreakJobs; print("hi")
