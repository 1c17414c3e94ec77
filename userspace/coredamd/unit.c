// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamd: the dump cgroup's limits through systemd. When the dump cgroup
 * is a slice systemd has loaded (coredump.slice), io.max and memory.high
 * are systemd's to write: it writes them when it starts the slice and on
 * every daemon-reload. The agent then sets them as systemd's runtime unit
 * properties (SetUnitProperties with runtime=true, as `systemctl
 * set-property --runtime` does), which systemd keeps across daemon-reload,
 * and puts the slice's own values back when it stops.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "agent.h"
#include "devices.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "slice.h"
#include "string-util.h"

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define MANAGER_IFACE "org.freedesktop.systemd1.Manager"
#define SLICE_IFACE "org.freedesktop.systemd1.Slice"
/* PID 1's own socket, as systemctl uses it as root: no D-Bus daemon needed */
#define SYSTEMD_PRIVATE "unix:path=/run/systemd/private"
/* a call PID 1 does not answer in this time fails, and the limits go to cgroupfs */
#define CALL_TIMEOUT_USEC (10 * 1000000ULL)

static int bus_connect(sd_bus **ret)
{
	sd_bus *bus = NULL;
	int r;

	r = sd_bus_new(&bus);
	if (r < 0)
		return r;
	r = sd_bus_set_address(bus, SYSTEMD_PRIVATE);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r >= 0) {
		*ret = bus;
		return 0;
	}
	sd_bus_unref(bus);
	/* the private socket is root's; a D-Bus daemon, where there is one, forwards to PID 1 as well */
	return sd_bus_open_system(ret);
}

static void bus_close(struct agent *a)
{
	a->unit.bus = sd_bus_flush_close_unref(a->unit.bus);
}

/* The entries of IO property @p of the slice, in systemd's order. */
static int get_io(struct agent *a, enum coredam_slice_prop p, struct coredam_slice_limits *l)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *path;
	uint64_t v;
	int r;

	l->n_io[p] = 0;
	r = sd_bus_get_property(a->unit.bus, SYSTEMD_DEST, a->unit.object, SLICE_IFACE, coredam_slice_prop_name(p), &e,
				&reply, "a(st)");
	sd_bus_error_free(&e);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "(st)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(st)", &path, &v)) > 0) {
		if (l->n_io[p] == COREDAM_SLICE_MAX_IO || strlen(path) >= sizeof(l->io[p][0].path)) {
			r = -E2BIG;
			break;
		}
		snprintf(l->io[p][l->n_io[p]].path, sizeof(l->io[p][0].path), "%s", path);
		l->io[p][l->n_io[p]++].limit = v;
	}
	sd_bus_message_unref(reply);
	return r;
}

/* Every limit systemd holds for the slice now. */
static int get_limits(struct agent *a, struct coredam_slice_limits *ret)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	for (int p = 0; p < COREDAM_SLICE_N_IO; p++) {
		r = get_io(a, p, ret);
		if (r < 0)
			return r;
	}
	r = sd_bus_get_property_trivial(a->unit.bus, SYSTEMD_DEST, a->unit.object, SLICE_IFACE, "MemoryHigh", &e,
					't', &ret->memory_high);
	sd_bus_error_free(&e);
	return r;
}

/* Where the slice's own limits are kept while the agent runs: survives a restart after a crash. */
static int saved_path(const struct agent *a, char *buf, size_t size)
{
	return xsnprintf(buf, size, "%s/%s.saved", a->roots.state, a->unit.name);
}

/*
 * The slice's own limits: the file a previous run left (it stopped
 * without putting them back), else what systemd holds now, saved.
 */
static int keep_own_limits(struct agent *a)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], buf[16384];
	int r;

	r = saved_path(a, path, sizeof(path));
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, sizeof(buf), &text);
	if (r >= 0) {
		r = coredam_slice_limits_parse(text, &a->unit.saved);
		if (r < 0)
			log_warning("%s does not parse: %s; taking %s's limits as systemd holds them, ignoring", path,
				    strerror(-r), a->unit.name);
		else
			return 0;
	} else if (r != -ENOENT) {
		log_warning("cannot read %s: %s; taking %s's limits as systemd holds them, ignoring", path,
			    strerror(-r), a->unit.name);
	}
	r = get_limits(a, &a->unit.saved);
	if (r < 0)
		return r;
	r = coredam_slice_limits_format(&a->unit.saved, buf, sizeof(buf));
	if (r < 0)
		return r;
	(void)mkdir_p(a->roots.state, 0755);
	return write_file_atomic(path, buf, strlen(buf), 0644);
}

/* The slice unit of a->cg_path, loaded in systemd, whose cgroup that is: its object in a->unit. */
static int find_unit(struct agent *a)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	_cleanup_free_ char *cg = NULL;
	const char *object;
	int r;

	r = sd_bus_call_method(a->unit.bus, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE, "GetUnit", &e, &reply, "s",
			       a->unit.name);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &object);
	if (r >= 0)
		r = xsnprintf(a->unit.object, sizeof(a->unit.object), "%s", object);
	if (r < 0 && sd_bus_error_is_set(&e))
		log_debug("GetUnit %s: %s: %s", a->unit.name, e.name, e.message ?: "");
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	if (r < 0)
		return r;
	r = sd_bus_get_property_string(a->unit.bus, SYSTEMD_DEST, a->unit.object, SLICE_IFACE, "ControlGroup", &e,
				       &cg);
	sd_bus_error_free(&e);
	if (r < 0)
		return r;
	return strcmp(cg, a->cg_path) == 0 ? 0 : -ESRCH;
}

void unit_attach(struct agent *a)
{
	char name[sizeof(a->unit.name)];
	int r;

	if (!a->cfg.set_through_systemd || sd_booted() <= 0 ||
	    coredam_slice_unit_name(a->cg_path, name, sizeof(name)) < 0) {
		unit_detach(a);
		return;
	}
	if (a->unit.active && strcmp(name, a->unit.name) == 0) {
		/* set up again (a cgroup made anew has no io.max): everything is sent again */
		a->unit.have_sent = false;
		return;
	}
	unit_detach(a);
	snprintf(a->unit.name, sizeof(a->unit.name), "%s", name);
	r = bus_connect(&a->unit.bus);
	if (r < 0) {
		log_warning("cannot connect to systemd: %s; writing %s's io.max and memory.high directly event=slice-unit",
			    strerror(-r), a->cg_path);
		return;
	}
	r = find_unit(a);
	if (r < 0) {
		log_info("%s is not the cgroup of a slice systemd has loaded (%s: %s): writing its io.max and "
			 "memory.high directly event=slice-unit", a->cg_path, a->unit.name,
			 r == -ESRCH ? "another cgroup" : strerror(-r));
		bus_close(a);
		return;
	}
	r = keep_own_limits(a);
	if (r < 0) {
		log_warning("cannot keep %s's own limits to put back at stop: %s; writing %s's io.max and "
			    "memory.high directly event=slice-unit", a->unit.name, strerror(-r), a->cg_path);
		bus_close(a);
		return;
	}
	a->unit.active = true;
	a->unit.have_sent = false;
	log_info("limits of %s set through systemd as %s's runtime properties event=slice-unit unit=%s", a->cg_path,
		 a->unit.name, a->unit.name);
}

/*
 * The paths systemd holds for some disk, with the disk: the slice's own
 * first (its unit file's, which every daemon-reload brings back), then
 * those it holds now. A path that does not resolve here is kept
 * unresolved (PrivateDevices= hides /dev nodes; /sys names them).
 */
static size_t known_paths(struct agent *a, const struct coredam_slice_limits *now, struct coredam_slice_known *k,
			  size_t max)
{
	const struct coredam_slice_limits *from[] = { &a->unit.saved, now };
	size_t n = 0;

	for (size_t s = 0; s < ELEMENTSOF(from); s++)
		for (int p = 0; p < COREDAM_SLICE_N_IO; p++)
			for (size_t i = 0; i < from[s]->n_io[p] && n < max; i++) {
				const char *path = from[s]->io[p][i].path;
				struct coredam_dev_info d;

				bool node = strncmp(path, "/dev/", 5) == 0;

				/* a partition, as systemd does, stands for its whole disk */
				k[n] = (struct coredam_slice_known){ .path = path };
				if ((node ? coredam_dev_resolve_spec(&a->roots, path, &d)
					  : coredam_dev_resolve_path(&a->roots, path, &d)) == 0)
					k[n] = (struct coredam_slice_known){ path, true, d.major, d.minor };
				else if (coredam_slice_parse_dev_block(path, &k[n].major, &k[n].minor) == 0)
					k[n].resolved = true;
				n++;
			}
	return n;
}

/* Append "(sv)" NAME a(st) with @n entries of @io. */
static int append_io(sd_bus_message *m, const char *name, const struct coredam_slice_io *io, size_t n)
{
	int r;

	r = sd_bus_message_open_container(m, 'r', "sv");
	if (r >= 0)
		r = sd_bus_message_append(m, "s", name);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'v', "a(st)");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(st)");
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = sd_bus_message_append(m, "(st)", io[i].path, io[i].limit);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

/*
 * The properties of @mask, set to @l: every IO property first emptied
 * (systemd then resets every entry it holds for it) and then given its
 * entries, so that the slice ends with exactly these.
 */
static int set_properties(struct agent *a, unsigned int mask, const struct coredam_slice_limits *l)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	int r;

	r = sd_bus_message_new_method_call(a->unit.bus, &m, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE,
					   "SetUnitProperties");
	if (r >= 0)
		r = sd_bus_message_append(m, "sb", a->unit.name, 1);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	for (int p = 0; r >= 0 && p < COREDAM_SLICE_N_IO; p++)
		if (mask & (1u << p)) {
			r = append_io(m, coredam_slice_prop_name(p), NULL, 0);
			if (r >= 0 && l->n_io[p])
				r = append_io(m, coredam_slice_prop_name(p), l->io[p], l->n_io[p]);
		}
	if (r >= 0 && (mask & (1u << COREDAM_SLICE_MEMORY_HIGH)))
		r = sd_bus_message_append(m, "(sv)", "MemoryHigh", "t", l->memory_high);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_call(a->unit.bus, m, CALL_TIMEOUT_USEC, &e, NULL);
	if (r < 0 && sd_bus_error_is_set(&e))
		log_debug("SetUnitProperties %s: %s: %s", a->unit.name, e.name, e.message ?: "");
	sd_bus_message_unref(m);
	sd_bus_error_free(&e);
	if (r >= 0)
		a->unit.calls++;
	return r;
}

/* @want as the slice's limits: every device named by the path systemd already has for its disk. */
static int want_limits(struct agent *a, const struct coredam_slice_want *want, unsigned int mask,
		       struct coredam_slice_limits *ret)
{
	struct coredam_slice_known k[2 * COREDAM_SLICE_N_IO * COREDAM_SLICE_MAX_IO];
	size_t n = 0;
	int r;

	if (mask & COREDAM_SLICE_IO_MASK) {
		static struct coredam_slice_limits now;

		r = get_limits(a, &now);
		if (r < 0)
			return r;
		n = known_paths(a, &now, k, ELEMENTSOF(k));
	}
	memset(ret, 0, sizeof(*ret));
	for (int p = 0; p < COREDAM_SLICE_N_IO; p++)
		for (size_t i = 0; want->io[p] && i < want->n_devs; i++) {
			r = coredam_slice_dev_path(k, n, want->major[i], want->minor[i], ret->io[p][i].path,
						   sizeof(ret->io[p][i].path));
			if (r < 0)
				return r;
			ret->io[p][i].limit = want->io[p];
			ret->n_io[p] = i + 1;
		}
	ret->memory_high = want->memory_high ? want->memory_high : COREDAM_SLICE_NO_LIMIT;
	return 0;
}

static int apply_once(struct agent *a, const struct coredam_slice_want *want, unsigned int mask)
{
	static struct coredam_slice_limits l;
	int r;

	r = want_limits(a, want, mask, &l);
	if (r < 0)
		return r;
	return set_properties(a, mask, &l);
}

int unit_apply(struct agent *a, const struct coredam_slice_want *want)
{
	unsigned int mask = a->unit.have_sent ? coredam_slice_want_diff(&a->unit.sent, want) : ~0u;
	int r;

	if (!a->unit.active)
		return -ENOTCONN;
	if (!mask)
		return 0;
	r = apply_once(a, want, mask);
	if (r < 0) {
		/* PID 1 re-executed, or the bus closed: once more on a new connection */
		log_debug("SetUnitProperties on %s failed: %s; connecting again", a->unit.name, strerror(-r));
		bus_close(a);
		r = bus_connect(&a->unit.bus);
		if (r >= 0)
			r = apply_once(a, want, mask);
	}
	if (r < 0)
		return r;
	a->unit.sent = *want;
	a->unit.have_sent = true;
	return 0;
}

void unit_fallback(struct agent *a)
{
	char path[PATH_MAX];

	/* nothing set yet: nothing to put back, at this stop or a later one */
	if (!a->unit.have_sent && saved_path(a, path, sizeof(path)) >= 0 && unlink(path) < 0 && errno != ENOENT)
		log_warning_errno(-errno, "cannot remove %s, ignoring: %m", path);
	a->unit.active = false;
	a->unit.have_sent = false;
	bus_close(a);
}

void unit_detach(struct agent *a)
{
	char path[PATH_MAX];
	int r;

	if (a->unit.active) {
		r = a->unit.bus ? set_properties(a, ~0u, &a->unit.saved) : -ENOTCONN;
		if (r < 0) {
			log_error("cannot put %s's own limits back: %s (kept in %s/%s.saved for the next start)",
				  a->unit.name, strerror(-r), a->roots.state, a->unit.name);
		} else {
			if (saved_path(a, path, sizeof(path)) >= 0 && unlink(path) < 0 && errno != ENOENT)
				log_warning_errno(-errno, "cannot remove %s, ignoring: %m", path);
			log_info("%s's own limits put back event=slice-restored unit=%s", a->unit.name, a->unit.name);
		}
	}
	a->unit.active = false;
	a->unit.have_sent = false;
	bus_close(a);
}

int unit_reload_active(struct agent *a, const char *name)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *bus = a->unit.bus;
	const char *object;
	char *state = NULL;
	int r;

	if (!bus) {
		r = bus_connect(&bus);
		if (r < 0)
			return r;
	}
	r = sd_bus_call_method(bus, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE, "GetUnit", &e, &reply, "s", name);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &object);
	if (r >= 0)
		r = sd_bus_get_property_string(bus, SYSTEMD_DEST, object, "org.freedesktop.systemd1.Unit", "ActiveState",
					       &e, &state);
	reply = sd_bus_message_unref(reply);
	/* stopping, or stopped, is left alone (its own stop writes the pattern); a reload
	   under way may have read what it writes before the change, so it is asked again */
	if (r >= 0 && strcmp(state, "active") != 0 && strcmp(state, "reloading") != 0)
		r = 0;
	else if (r >= 0 && (r = sd_bus_call_method(bus, SYSTEMD_DEST, SYSTEMD_PATH, MANAGER_IFACE, "ReloadUnit", &e,
						    &reply, "ss", name, "replace")) >= 0)
		r = 1;
	sd_bus_message_unref(reply);
	free(state);
	if (r < 0 && e.message)
		log_warning("systemd: %s: %s", name, e.message);
	if (bus != a->unit.bus)
		sd_bus_flush_close_unref(bus);
	return r;
}
