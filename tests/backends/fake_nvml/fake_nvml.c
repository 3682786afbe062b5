/*
 * A scriptable stand-in for libnvidia-ml.so.1, built by the test suite with
 *   gcc -O2 -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o libnvidia-ml.so.1 fake_nvml.c
 *
 * Every value and every return code comes from a "key=value" file named by the
 * environment variable FAKE_NVML_CONFIG. The file is re-read whenever it changes
 * (inode, size or mtime), so a test can make a GPU fall off the bus mid-run.
 *
 * Keys (all optional; defaults describe an idle 8-GPU HGX H100 80GB node):
 *   init=<rc>                      return code of nvmlInitWithFlags (9 = DRIVER_NOT_LOADED)
 *   count=<n>                      number of GPUs
 *   driver_version=<s>
 *   fn.<nvmlFunction>=<rc>         error code for that function on every device
 *   gpu<i>.err=<rc>                error code for every per-device call on GPU i (15 = GPU_IS_LOST)
 *   gpu<i>.fn.<nvmlFunction>=<rc>  error code for that function on GPU i (3 = NOT_SUPPORTED)
 *   gpu<i>.<field>=<value>         values (see dev_* names below)
 *   gpu<i>.procs=pid:bytes,...     compute processes
 *   gpu<i>.retired_supported=1     page retirement answers (H100 default: NOT_SUPPORTED)
 *   gpu<i>.nvlink<l>.state=0|1, gpu<i>.nvlink<l>.err<c>=<count>
 *   events=<gpu>:<type>:<data>,... events delivered once each, in order
 *   delay_ms=<ms>                  every per-device call sleeps this long (a hung driver)
 *
 * Struct layouts follow nvidia-ml-py 13.615.71 (pynvml.py).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;

#define RC_SUCCESS 0
#define RC_UNINITIALIZED 1
#define RC_INVALID_ARGUMENT 2
#define RC_NOT_SUPPORTED 3
#define RC_INSUFFICIENT_SIZE 7
#define RC_TIMEOUT 10
#define RC_GPU_IS_LOST 15
#define RC_UNKNOWN 999

#define MAX_GPUS 64
#define MAX_EVENTS 256
#define TABLE_SIZE 8192
#define MAX_LINKS 36

/* ---------- key/value store ------------------------------------------------ */

typedef struct {
    char *key;
    char *val;
} entry_t;

static entry_t table[TABLE_SIZE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char config_path[4096];
static ino_t cfg_ino;
static off_t cfg_size;
static struct timespec cfg_mtime;
static int cfg_loaded;
static int initialized;

typedef struct {
    unsigned int gpu;
    unsigned long long type;
    unsigned long long data;
} event_t;

static event_t events[MAX_EVENTS];
static int n_events;
static int event_cursor;

typedef struct {
    int index;
} device_t;

static device_t devices[MAX_GPUS];

typedef struct {
    unsigned long long mask[MAX_GPUS];
} event_set_t;

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 1099511628211ULL;
    }
    return h;
}

static void table_clear(void) {
    for (int i = 0; i < TABLE_SIZE; i++) {
        free(table[i].key);
        free(table[i].val);
        table[i].key = NULL;
        table[i].val = NULL;
    }
}

static void table_put(const char *key, const char *val) {
    uint64_t h = fnv1a(key) & (TABLE_SIZE - 1);
    for (int n = 0; n < TABLE_SIZE; n++, h = (h + 1) & (TABLE_SIZE - 1)) {
        if (table[h].key == NULL) {
            table[h].key = strdup(key);
            table[h].val = strdup(val);
            return;
        }
        if (strcmp(table[h].key, key) == 0) {
            free(table[h].val);
            table[h].val = strdup(val);
            return;
        }
    }
}

static const char *table_get(const char *key) {
    uint64_t h = fnv1a(key) & (TABLE_SIZE - 1);
    for (int n = 0; n < TABLE_SIZE; n++, h = (h + 1) & (TABLE_SIZE - 1)) {
        if (table[h].key == NULL) return NULL;
        if (strcmp(table[h].key, key) == 0) return table[h].val;
    }
    return NULL;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = 0;
    return s;
}

static void parse_events(const char *spec) {
    n_events = 0;
    if (spec == NULL) return;
    char *copy = strdup(spec);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n_events < MAX_EVENTS;
         tok = strtok_r(NULL, ",", &save)) {
        unsigned int gpu;
        unsigned long long type, data;
        if (sscanf(tok, " %u:%llu:%llu", &gpu, &type, &data) == 3) {
            events[n_events].gpu = gpu;
            events[n_events].type = type;
            events[n_events].data = data;
            n_events++;
        }
    }
    free(copy);
}

/* Re-read the config file when it changed; caller holds `lock`. */
static void maybe_reload(void) {
    const char *path = getenv("FAKE_NVML_CONFIG");
    struct stat st;
    if (path == NULL || stat(path, &st) != 0) {
        if (cfg_loaded) {
            table_clear();
            parse_events(NULL);
            cfg_loaded = 0;
        }
        config_path[0] = 0;
        return;
    }
    if (cfg_loaded && strcmp(path, config_path) == 0 && st.st_ino == cfg_ino &&
        st.st_size == cfg_size && st.st_mtim.tv_sec == cfg_mtime.tv_sec &&
        st.st_mtim.tv_nsec == cfg_mtime.tv_nsec)
        return;
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    table_clear();
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (*s == 0 || *s == '#') continue;
        char *eq = strchr(s, '=');
        if (eq == NULL) continue;
        *eq = 0;
        table_put(trim(s), trim(eq + 1));
    }
    fclose(f);
    /* A different file restarts the event script; a rewritten one continues it. */
    if (strcmp(path, config_path) != 0) event_cursor = 0;
    parse_events(table_get("events"));
    snprintf(config_path, sizeof config_path, "%s", path);
    cfg_ino = st.st_ino;
    cfg_size = st.st_size;
    cfg_mtime = st.st_mtim;
    cfg_loaded = 1;
}

static long long get_ll(const char *key, long long dflt) {
    const char *v = table_get(key);
    if (v == NULL || *v == 0) return dflt;
    return strtoll(v, NULL, 0);
}

static unsigned long long get_ull(const char *key, unsigned long long dflt) {
    const char *v = table_get(key);
    if (v == NULL || *v == 0) return dflt;
    return strtoull(v, NULL, 0);
}

static long long dev_ll(int i, const char *field, long long dflt) {
    char key[256];
    snprintf(key, sizeof key, "gpu%d.%s", i, field);
    return get_ll(key, dflt);
}

static unsigned long long dev_ull(int i, const char *field, unsigned long long dflt) {
    char key[256];
    snprintf(key, sizeof key, "gpu%d.%s", i, field);
    return get_ull(key, dflt);
}

static const char *dev_str(int i, const char *field) {
    char key[256];
    snprintf(key, sizeof key, "gpu%d.%s", i, field);
    return table_get(key);
}

static int gpu_count(void) {
    long long n = get_ll("count", 8);
    if (n < 0) n = 0;
    if (n > MAX_GPUS) n = MAX_GPUS;
    return (int)n;
}

/* Common prologue of a per-device call: lock, reload, resolve the handle, apply the
 * scripted error codes. Returns the index or -1 with *rc set. Caller must unlock. */
static int enter_dev(void *handle, const char *fn, nvmlReturn_t *rc) {
    pthread_mutex_lock(&lock);
    maybe_reload();
    *rc = RC_SUCCESS;
    if (!initialized) {
        *rc = RC_UNINITIALIZED;
        return -1;
    }
    device_t *d = (device_t *)handle;
    if (d < devices || d >= devices + MAX_GPUS) {
        *rc = RC_INVALID_ARGUMENT;
        return -1;
    }
    int i = d->index;
    if (i >= gpu_count()) {
        *rc = RC_INVALID_ARGUMENT;
        return -1;
    }
    char key[256];
    /* A hung driver (Xid 119: GSP RPC timeouts) makes every call slow. */
    long long delay = get_ll("delay_ms", 0);
    if (delay > 0) usleep((useconds_t)(delay * 1000));
    long long e = dev_ll(i, "err", 0);
    if (e) {
        *rc = (nvmlReturn_t)e;
        return -1;
    }
    snprintf(key, sizeof key, "gpu%d.fn.%s", i, fn);
    e = get_ll(key, 0);
    if (e) {
        *rc = (nvmlReturn_t)e;
        return -1;
    }
    snprintf(key, sizeof key, "fn.%s", fn);
    e = get_ll(key, 0);
    if (e) {
        *rc = (nvmlReturn_t)e;
        return -1;
    }
    return i;
}

static nvmlReturn_t enter_global(const char *fn) {
    pthread_mutex_lock(&lock);
    maybe_reload();
    if (!initialized) return RC_UNINITIALIZED;
    char key[256];
    snprintf(key, sizeof key, "fn.%s", fn);
    return (nvmlReturn_t)get_ll(key, 0);
}

#define DEV_PROLOGUE(name)                    \
    nvmlReturn_t rc;                          \
    int i = enter_dev(device, name, &rc);     \
    if (i < 0) {                              \
        pthread_mutex_unlock(&lock);          \
        return rc;                            \
    }

#define DEV_RETURN(x)                \
    do {                             \
        pthread_mutex_unlock(&lock); \
        return (x);                  \
    } while (0)

/* Default PCI bus numbers of an HGX H100 8-GPU baseboard. */
static const unsigned int default_bus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

static unsigned int bus_of(int i) {
    return (unsigned int)dev_ll(i, "bus", i < 8 ? (long long)default_bus[i] : (long long)(0x10 + i));
}

/* ---------- library ---------------------------------------------------------- */

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    pthread_mutex_lock(&lock);
    maybe_reload();
    nvmlReturn_t rc = (nvmlReturn_t)get_ll("init", 0);
    if (rc == RC_SUCCESS) {
        initialized++; /* reference-counted like the real library */
        for (int i = 0; i < MAX_GPUS; i++) devices[i].index = i;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    nvmlReturn_t rc = initialized ? RC_SUCCESS : RC_UNINITIALIZED;
    if (initialized > 0) initialized--;
    pthread_mutex_unlock(&lock);
    return rc;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 5: return "Already Initialized";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 8: return "Insufficient External Power";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 11: return "Interrupt Request Issue";
    case 12: return "NVML Shared Library Not Found";
    case 13: return "Function Not Found";
    case 14: return "Corrupted infoROM";
    case 15: return "GPU is lost";
    case 16: return "GPU requires restart";
    case 17: return "The operating system has blocked the request.";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    case 19: return "In use by another client";
    case 20: return "Insufficient Memory";
    case 21: return "No data";
    case 25: return "Argument version mismatch";
    case 28: return "GPU not found";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    nvmlReturn_t rc = enter_global("nvmlSystemGetDriverVersion");
    if (rc == RC_SUCCESS) {
        const char *v = table_get("driver_version");
        snprintf(version, length, "%s", v ? v : "550.90.07");
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
    nvmlReturn_t rc = enter_global("nvmlSystemGetCudaDriverVersion_v2");
    if (rc == RC_SUCCESS) *v = (int)get_ll("cuda_version", 12040);
    pthread_mutex_unlock(&lock);
    return rc;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    nvmlReturn_t rc = enter_global("nvmlDeviceGetCount_v2");
    if (rc == RC_SUCCESS) *count = (unsigned int)gpu_count();
    pthread_mutex_unlock(&lock);
    return rc;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device) {
    nvmlReturn_t rc = enter_global("nvmlDeviceGetHandleByIndex_v2");
    if (rc == RC_SUCCESS) {
        if ((int)index >= gpu_count()) {
            rc = RC_INVALID_ARGUMENT;
        } else {
            long long e = dev_ll((int)index, "err", 0);
            if (e) rc = (nvmlReturn_t)e;
            else *device = &devices[index];
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---------- identity --------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetIndex(void *device, unsigned int *index) {
    DEV_PROLOGUE("nvmlDeviceGetIndex");
    *index = (unsigned int)i;
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetName(void *device, char *name, unsigned int length) {
    DEV_PROLOGUE("nvmlDeviceGetName");
    const char *v = dev_str(i, "name");
    snprintf(name, length, "%s", v ? v : "NVIDIA H100 80GB HBM3");
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetUUID(void *device, char *uuid, unsigned int length) {
    DEV_PROLOGUE("nvmlDeviceGetUUID");
    const char *v = dev_str(i, "uuid");
    if (v) snprintf(uuid, length, "%s", v);
    else snprintf(uuid, length, "GPU-5a1c0e2f-%04x-4b7d-9e31-0000000000%02x", 0x3c00 + i, i);
    DEV_RETURN(RC_SUCCESS);
}

typedef struct {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

nvmlReturn_t nvmlDeviceGetPciInfo_v3(void *device, nvmlPciInfo_t *pci) {
    DEV_PROLOGUE("nvmlDeviceGetPciInfo_v3");
    memset(pci, 0, sizeof *pci);
    pci->domain = (unsigned int)dev_ll(i, "domain", 0);
    pci->bus = bus_of(i);
    pci->device = (unsigned int)dev_ll(i, "pci_device", 0);
    /* H100 SXM5 80GB: device 0x2330, vendor 0x10de. */
    pci->pciDeviceId = (unsigned int)dev_ll(i, "pci_device_id", 0x233010de);
    pci->pciSubSystemId = (unsigned int)dev_ll(i, "pci_subsystem_id", 0x16c110de);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", pci->domain, pci->bus,
             pci->device);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
    DEV_RETURN(RC_SUCCESS);
}

/* ---------- utilization, memory, thermals, power, clocks --------------------- */

typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

nvmlReturn_t nvmlDeviceGetUtilizationRates(void *device, nvmlUtilization_t *u) {
    DEV_PROLOGUE("nvmlDeviceGetUtilizationRates");
    u->gpu = (unsigned int)dev_ll(i, "util_gpu", 0);
    u->memory = (unsigned int)dev_ll(i, "util_mem", 0);
    DEV_RETURN(RC_SUCCESS);
}

#define MIB (1024ULL * 1024ULL)
static const unsigned long long H100_TOTAL = 81559ULL * MIB;
static const unsigned long long H100_RESERVED = 579ULL * MIB;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

nvmlReturn_t nvmlDeviceGetMemoryInfo(void *device, nvmlMemory_t *m) {
    DEV_PROLOGUE("nvmlDeviceGetMemoryInfo");
    unsigned long long total = dev_ull(i, "mem_total", H100_TOTAL);
    unsigned long long reserved = dev_ull(i, "mem_reserved", H100_RESERVED);
    unsigned long long used = dev_ull(i, "mem_used", 0);
    m->total = total;
    m->used = used + reserved; /* v1 counts the reserved memory as used */
    m->free = total - used - reserved;
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(void *device, nvmlMemory_v2_t *m) {
    DEV_PROLOGUE("nvmlDeviceGetMemoryInfo_v2");
    if (m->version != ((2u << 24) | (unsigned int)sizeof(nvmlMemory_v2_t)))
        DEV_RETURN(25); /* ARGUMENT_VERSION_MISMATCH */
    m->total = dev_ull(i, "mem_total", H100_TOTAL);
    m->reserved = dev_ull(i, "mem_reserved", H100_RESERVED);
    m->used = dev_ull(i, "mem_used", 0);
    m->free = m->total - m->reserved - m->used;
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperature(void *device, int sensor, unsigned int *temp) {
    DEV_PROLOGUE("nvmlDeviceGetTemperature");
    if (sensor != 0) DEV_RETURN(RC_INVALID_ARGUMENT);
    *temp = (unsigned int)dev_ll(i, "temp_gpu", 31);
    DEV_RETURN(RC_SUCCESS);
}

typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    unsigned int valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

#define FI_DEV_MEMORY_TEMP 82
#define FI_DEV_PCIE_REPLAY_COUNTER 94

nvmlReturn_t nvmlDeviceGetFieldValues(void *device, int count, nvmlFieldValue_t *values) {
    DEV_PROLOGUE("nvmlDeviceGetFieldValues");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (int k = 0; k < count; k++) {
        nvmlFieldValue_t *v = &values[k];
        v->timestamp = (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
        v->latencyUsec = 0;
        char key[64];
        snprintf(key, sizeof key, "field%u.err", v->fieldId);
        long long e = dev_ll(i, key, 0);
        if (e) {
            v->nvmlReturn = (nvmlReturn_t)e;
            continue;
        }
        switch (v->fieldId) {
        case FI_DEV_MEMORY_TEMP:
            v->valueType = 1;
            v->value.uiVal = (unsigned int)dev_ll(i, "temp_mem", 40);
            v->nvmlReturn = RC_SUCCESS;
            break;
        case FI_DEV_PCIE_REPLAY_COUNTER:
            v->valueType = 3;
            v->value.ullVal = dev_ull(i, "pcie_replay", 0);
            v->nvmlReturn = RC_SUCCESS;
            break;
        default:
            v->nvmlReturn = RC_NOT_SUPPORTED;
        }
    }
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(void *device, unsigned int *mw) {
    DEV_PROLOGUE("nvmlDeviceGetPowerUsage");
    *mw = (unsigned int)dev_ll(i, "power_mw", 71000);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void *device, unsigned int *mw) {
    DEV_PROLOGUE("nvmlDeviceGetEnforcedPowerLimit");
    *mw = (unsigned int)dev_ll(i, "power_limit_mw", 700000);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetClockInfo(void *device, int type, unsigned int *mhz) {
    DEV_PROLOGUE("nvmlDeviceGetClockInfo");
    if (type == 1) *mhz = (unsigned int)dev_ll(i, "clock_sm", 345);
    else if (type == 2) *mhz = (unsigned int)dev_ll(i, "clock_mem", 2619);
    else if (type == 0) *mhz = (unsigned int)dev_ll(i, "clock_graphics", dev_ll(i, "clock_sm", 345));
    else DEV_RETURN(RC_NOT_SUPPORTED);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(void *device, int type, unsigned int *mhz) {
    DEV_PROLOGUE("nvmlDeviceGetMaxClockInfo");
    if (type == 1 || type == 0) *mhz = (unsigned int)dev_ll(i, "clock_sm_max", 1980);
    else if (type == 2) *mhz = (unsigned int)dev_ll(i, "clock_mem_max", 2619);
    else DEV_RETURN(RC_NOT_SUPPORTED);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *reasons) {
    DEV_PROLOGUE("nvmlDeviceGetCurrentClocksEventReasons");
    *reasons = dev_ull(i, "clock_reasons", 0x1); /* GpuIdle */
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void *device, unsigned long long *reasons) {
    return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

/* ---------- memory errors ---------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetEccMode(void *device, int *current, int *pending) {
    DEV_PROLOGUE("nvmlDeviceGetEccMode");
    *current = (int)dev_ll(i, "ecc_mode", 1);
    *pending = (int)dev_ll(i, "ecc_mode_pending", *current);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(void *device, int errorType, int counterType,
                                         unsigned long long *count) {
    DEV_PROLOGUE("nvmlDeviceGetTotalEccErrors");
    if (dev_ll(i, "ecc_mode", 1) == 0) DEV_RETURN(RC_NOT_SUPPORTED);
    static const char *names[2][2] = {{"ecc_corr_vol", "ecc_corr_agg"},
                                      {"ecc_uncorr_vol", "ecc_uncorr_agg"}};
    if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1)
        DEV_RETURN(RC_INVALID_ARGUMENT);
    *count = dev_ull(i, names[errorType][counterType], 0);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(void *device, unsigned int *corr, unsigned int *unc,
                                       unsigned int *pending, unsigned int *failure) {
    DEV_PROLOGUE("nvmlDeviceGetRemappedRows");
    /* Row remapping is unavailable while MIG instances are active (nvml.h). */
    if (dev_ll(i, "mig_mode", 0) == 1) DEV_RETURN(RC_NOT_SUPPORTED);
    *corr = (unsigned int)dev_ll(i, "remap_corr", 0);
    *unc = (unsigned int)dev_ll(i, "remap_unc", 0);
    *pending = (unsigned int)dev_ll(i, "remap_pending", 0);
    *failure = (unsigned int)dev_ll(i, "remap_failure", 0);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPages(void *device, int cause, unsigned int *count,
                                       unsigned long long *addresses) {
    DEV_PROLOGUE("nvmlDeviceGetRetiredPages");
    /* Ampere and newer replace page retirement by row remapping: N/A there. */
    if (dev_ll(i, "retired_supported", 0) == 0) DEV_RETURN(RC_NOT_SUPPORTED);
    unsigned int n = (unsigned int)dev_ll(i, cause == 0 ? "retired_sbe" : "retired_dbe", 0);
    if (addresses == NULL || *count < n) {
        unsigned int have = *count;
        *count = n;
        if (n == 0 && have == 0) DEV_RETURN(RC_SUCCESS);
        DEV_RETURN(RC_INSUFFICIENT_SIZE);
    }
    for (unsigned int k = 0; k < n; k++) addresses[k] = 0x7fffa8ULL + k;
    *count = n;
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(void *device, int *pending) {
    DEV_PROLOGUE("nvmlDeviceGetRetiredPagesPendingStatus");
    if (dev_ll(i, "retired_supported", 0) == 0) DEV_RETURN(RC_NOT_SUPPORTED);
    *pending = (int)dev_ll(i, "retired_pending", 0);
    DEV_RETURN(RC_SUCCESS);
}

/* ---------- PCIe / NVLink ---------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(void *device, unsigned int *v) {
    DEV_PROLOGUE("nvmlDeviceGetCurrPcieLinkGeneration");
    *v = (unsigned int)dev_ll(i, "pcie_gen", 5);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(void *device, unsigned int *v) {
    DEV_PROLOGUE("nvmlDeviceGetCurrPcieLinkWidth");
    *v = (unsigned int)dev_ll(i, "pcie_width", 16);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(void *device, unsigned int *v) {
    DEV_PROLOGUE("nvmlDeviceGetMaxPcieLinkGeneration");
    *v = (unsigned int)dev_ll(i, "pcie_gen_max", 5);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(void *device, unsigned int *v) {
    DEV_PROLOGUE("nvmlDeviceGetMaxPcieLinkWidth");
    *v = (unsigned int)dev_ll(i, "pcie_width_max", 16);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkState(void *device, unsigned int link, unsigned int *active) {
    DEV_PROLOGUE("nvmlDeviceGetNvLinkState");
    /* H100 SXM5 has 18 NVLink 4 links. */
    long long nlinks = dev_ll(i, "nvlink_count", 18);
    if (nlinks == 0) DEV_RETURN(RC_NOT_SUPPORTED);
    if ((long long)link >= nlinks || link >= MAX_LINKS) DEV_RETURN(RC_INVALID_ARGUMENT);
    char key[64];
    snprintf(key, sizeof key, "nvlink%u.state", link);
    *active = (unsigned int)dev_ll(i, key, 1);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(void *device, unsigned int link, int counter,
                                             unsigned long long *value) {
    DEV_PROLOGUE("nvmlDeviceGetNvLinkErrorCounter");
    long long nlinks = dev_ll(i, "nvlink_count", 18);
    if (nlinks == 0) DEV_RETURN(RC_NOT_SUPPORTED);
    if ((long long)link >= nlinks || counter < 0 || counter > 4) DEV_RETURN(RC_INVALID_ARGUMENT);
    char key[64];
    snprintf(key, sizeof key, "nvlink%u.err%d", link, counter);
    *value = dev_ull(i, key, 0);
    DEV_RETURN(RC_SUCCESS);
}

/* ---------- MIG, processes --------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetMigMode(void *device, unsigned int *current, unsigned int *pending) {
    DEV_PROLOGUE("nvmlDeviceGetMigMode");
    *current = (unsigned int)dev_ll(i, "mig_mode", 0);
    *pending = (unsigned int)dev_ll(i, "mig_pending", *current);
    DEV_RETURN(RC_SUCCESS);
}

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t; /* 24 bytes with padding: the v2/v3 layout */

static int parse_procs(int i, nvmlProcessInfo_t *out, int cap) {
    const char *spec = dev_str(i, "procs");
    if (spec == NULL || *spec == 0) return 0;
    char *copy = strdup(spec);
    char *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned int pid;
        unsigned long long used;
        if (sscanf(tok, " %u:%llu", &pid, &used) != 2) continue;
        if (out != NULL && n < cap) {
            out[n].pid = pid;
            out[n].usedGpuMemory = used;
            out[n].gpuInstanceId = 0xFFFFFFFFu;
            out[n].computeInstanceId = 0xFFFFFFFFu;
        }
        n++;
    }
    free(copy);
    return n;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    DEV_PROLOGUE("nvmlDeviceGetComputeRunningProcesses_v3");
    int n = parse_procs(i, NULL, 0);
    if (infos == NULL || *count < (unsigned int)n) {
        *count = (unsigned int)n;
        DEV_RETURN(n == 0 ? RC_SUCCESS : RC_INSUFFICIENT_SIZE);
    }
    parse_procs(i, infos, (int)*count);
    *count = (unsigned int)n;
    DEV_RETURN(RC_SUCCESS);
}

/* ---------- events ----------------------------------------------------------- */

typedef struct {
    void *device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

nvmlReturn_t nvmlEventSetCreate(event_set_t **set) {
    nvmlReturn_t rc = enter_global("nvmlEventSetCreate");
    if (rc == RC_SUCCESS) {
        *set = calloc(1, sizeof(event_set_t));
        if (*set == NULL) rc = 20;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

nvmlReturn_t nvmlEventSetFree(event_set_t *set) {
    pthread_mutex_lock(&lock);
    free(set);
    pthread_mutex_unlock(&lock);
    return RC_SUCCESS;
}

/* XidCriticalError | DoubleBitEcc | SingleBitEcc | PState | Clock; H100 adds more. */
#define DEFAULT_EVENT_TYPES 0xFFFFULL

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(void *device, unsigned long long *types) {
    DEV_PROLOGUE("nvmlDeviceGetSupportedEventTypes");
    *types = dev_ull(i, "supported_events", DEFAULT_EVENT_TYPES);
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlDeviceRegisterEvents(void *device, unsigned long long types, event_set_t *set) {
    DEV_PROLOGUE("nvmlDeviceRegisterEvents");
    unsigned long long supported = dev_ull(i, "supported_events", DEFAULT_EVENT_TYPES);
    if ((types & ~supported) != 0) DEV_RETURN(RC_NOT_SUPPORTED);
    set->mask[i] |= types;
    DEV_RETURN(RC_SUCCESS);
}

nvmlReturn_t nvmlEventSetWait_v2(event_set_t *set, nvmlEventData_t *data, unsigned int timeoutms) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        nvmlReturn_t rc = enter_global("nvmlEventSetWait_v2");
        if (rc != RC_SUCCESS) {
            pthread_mutex_unlock(&lock);
            return rc;
        }
        while (event_cursor < n_events) {
            event_t *e = &events[event_cursor++];
            if (e->gpu < MAX_GPUS && (set->mask[e->gpu] & e->type)) {
                data->device = &devices[e->gpu];
                data->eventType = e->type;
                data->eventData = e->data;
                data->gpuInstanceId = 0xFFFFFFFFu;
                data->computeInstanceId = 0xFFFFFFFFu;
                pthread_mutex_unlock(&lock);
                return RC_SUCCESS;
            }
        }
        pthread_mutex_unlock(&lock);
        clock_gettime(CLOCK_MONOTONIC, &now);
        long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
        if (elapsed_ms >= (long)timeoutms) return RC_TIMEOUT;
        long left = (long)timeoutms - elapsed_ms;
        usleep((useconds_t)((left < 10 ? left : 10) * 1000));
    }
}

nvmlReturn_t nvmlEventSetWait(event_set_t *set, nvmlEventData_t *data, unsigned int timeoutms) {
    return nvmlEventSetWait_v2(set, data, timeoutms);
}
