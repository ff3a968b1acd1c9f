/* The stand-in's fault events: dcmi_subscribe_fault_event starts one watcher thread that reads
 * the host file again whenever it changes (inotify on its directory, woken at once; and a check
 * every second, for a DCMI_STUB_HOST moved elsewhere: seldom, so that the stand-in's own idle
 * wake-ups do not weigh on the plugin's idle CPU in benchmarks/dcmi.py) and calls the handler
 * once per change of a chip's current error codes: assertion 1 (raised) for a code that appeared, 0
 * (recovered) for one that went, deviceid the chip's logic id, severity its health word (0..3),
 * as struct dcmi_dms_fault_event carries them (dcmi_stub.h names the sources). So a test that
 * rewrites a chip's codes both changes what dcmi_get_device_errorcode_v2 answers and announces
 * it, as the driver does.
 *
 * card and device -1 subscribe every chip (Huawei's plugin: SubscribeAllDevice); a filter's
 * event id and severity flags are honoured. "subscribe_rc <rc>" in the host file makes the
 * call fail with that code (-8255: not supported, as on chips Huawei subscribes on none of).
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dcmi_stub_host.h"

#define FLAG_EVENT_ID (1ULL << 0)
#define FLAG_SEVERITY (1ULL << 1)
#define CHECK_MS 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dcmi_fault_handler handler;
static struct dcmi_event_filter filter;
static int scope_card = STUB_SUBSCRIBE_ALL, scope_device = STUB_SUBSCRIBE_ALL, watching;
static int serial;

static int has_code(const char *codes, unsigned int code) {
    char copy[1024], *save = NULL;
    if (strcmp(codes, "-") == 0) return 0;
    strcpy(copy, codes);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if ((unsigned int)strtoul(tok, NULL, 16) == code) return 1;
    return 0;
}

static void announce(const struct chip *c, unsigned int code, int assertion) {
    struct dcmi_event event;
    pthread_mutex_lock(&lock);
    dcmi_fault_handler call = handler;
    int wanted = (scope_card == STUB_SUBSCRIBE_ALL || scope_card == c->card) &&
                 (scope_device == STUB_SUBSCRIBE_ALL || scope_device == c->device) &&
                 (!(filter.filter_flag & FLAG_EVENT_ID) || filter.event_id == code) &&
                 (!(filter.filter_flag & FLAG_SEVERITY) || c->health >= filter.severity);
    int number = ++serial;
    pthread_mutex_unlock(&lock);
    if (!wanted || call == NULL) return;
    memset(&event, 0, sizeof event);
    event.type = 0; /* DCMI_DMS_FAULT_EVENT */
    event.event_t.dms_event.event_id = code;
    event.event_t.dms_event.deviceid = (unsigned short)c->logic;
    event.event_t.dms_event.severity = (unsigned char)(c->health > 3 ? 3 : c->health);
    event.event_t.dms_event.assertion = (unsigned char)assertion;
    event.event_t.dms_event.event_serial_num = number;
    event.event_t.dms_event.alarm_raised_time = (unsigned long long)time(NULL);
    snprintf(event.event_t.dms_event.event_name, STUB_MAX_EVENT_NAME_LENGTH, "stub fault %08X",
             code);
    call(&event);
}

/* Events for each code of `from` that `to` lacks, with `assertion`. */
static void compare(const struct host *from, const struct host *to, int assertion) {
    for (int i = 0; i < from->chip_count; i++) {
        const struct chip *c = &from->chips[i], *other = NULL;
        for (int j = 0; j < to->chip_count; j++)
            if (to->chips[j].logic == c->logic) other = &to->chips[j];
        if (strcmp(c->codes, "-") == 0) continue;
        char copy[1024], *save = NULL;
        strcpy(copy, c->codes);
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            unsigned int code = (unsigned int)strtoul(tok, NULL, 16);
            if (other == NULL || !has_code(other->codes, code))
                announce(assertion ? c : (other ? other : c), code, assertion);
        }
    }
}

static int changed(struct stat *seen) {
    const char *path = getenv("DCMI_STUB_HOST");
    struct stat now;
    if (path == NULL || stat(path, &now) != 0) return 0;
    int moved = now.st_ino != seen->st_ino || now.st_mtim.tv_nsec != seen->st_mtim.tv_nsec ||
                now.st_mtim.tv_sec != seen->st_mtim.tv_sec || now.st_size != seen->st_size;
    *seen = now;
    return moved;
}

/* The host as last announced, and its file's identity: taken by the subscribing call itself,
 * so a change made right after dcmi_subscribe_fault_event returns is announced. */
static struct host before;
static struct stat seen;

/* An inotify descriptor watching the directory of DCMI_STUB_HOST (-1 if none can be had). */
static int watch_directory(void) {
    const char *path = getenv("DCMI_STUB_HOST");
    char directory[4096];
    int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0 || path == NULL || strlen(path) >= sizeof directory) return fd;
    strcpy(directory, path);
    char *slash = strrchr(directory, '/');
    if (slash != NULL) *slash = '\0';
    inotify_add_watch(fd, slash != NULL ? directory : ".", IN_MOVED_TO | IN_CLOSE_WRITE);
    return fd;
}

static void *watch(void *unused) {
    (void)unused;
    struct host *now;
    char drained[4096];
    struct pollfd wake = {watch_directory(), POLLIN, 0};
    for (;;) {
        if (poll(&wake, wake.fd >= 0 ? 1 : 0, CHECK_MS) > 0)
            while (read(wake.fd, drained, sizeof drained) > 0) continue;
        if (!changed(&seen) || stub_load(&now) == STUB_ERR_INTERNAL) continue;
        compare(now, &before, 1);  /* codes now that were not before: raised */
        compare(&before, now, 0);  /* codes before that are not now: recovered */
        before = *now;
    }
    return NULL;
}

int dcmi_subscribe_fault_event(int card_id, int device_id, struct dcmi_event_filter wanted,
                               dcmi_fault_handler on_event) {
    struct host *h;
    int rc = stub_load(&h);
    if (rc != STUB_OK) return rc;
    if (h->subscribe_rc != STUB_OK) return h->subscribe_rc;
    if (on_event == NULL) return STUB_ERR_PARAMETER;
    if (card_id != STUB_SUBSCRIBE_ALL || device_id != STUB_SUBSCRIBE_ALL)
        if (stub_find(card_id, device_id, &rc) == NULL) return rc;
    pthread_mutex_lock(&lock);
    handler = on_event, filter = wanted, scope_card = card_id, scope_device = device_id;
    int start = !watching;
    watching = 1;
    pthread_mutex_unlock(&lock);
    if (start) {
        memset(&seen, 0, sizeof seen);
        changed(&seen);
        stub_load(&h);
        before = *h;
    }
    pthread_t thread;
    if (start && pthread_create(&thread, NULL, watch, NULL) == 0) pthread_detach(thread);
    return STUB_OK;
}
