#ifndef nr_dms
#define nr_dms 2048
#endif
#ifndef nr_samples
#define nr_samples 25000
#endif
#ifndef nr_channels
#define nr_channels 1536
#endif
#ifndef max_shift
#define max_shift 650
#endif
#define nr_samples_per_channel (nr_samples+max_shift)
#define dm_first 0.0f
#define dm_step 0.02f
