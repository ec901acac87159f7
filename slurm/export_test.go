package slurm

// OpenDirNoFollowWith lets the external tests open a directory both ways:
// with openat2 and by the component walk kept for kernels without it.
var OpenDirNoFollowWith = openDirNoFollowWith

// JobText reads a job the way a Slurm without squeue --json is read.
var JobText = Client.jobText
