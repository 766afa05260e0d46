package platform

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/godbus/dbus/v5"
)

// The desktop notification service (freedesktop Desktop Notifications
// specification) on the session bus.
const (
	notificationsName   = "org.freedesktop.Notifications"
	notificationsPath   = "/org/freedesktop/Notifications"
	notificationsNotify = notificationsName + ".Notify"
)

// ErrNoDesktop is returned when there is no graphical session to notify:
// no session bus address, no bus answering there, or nobody owning
// org.freedesktop.Notifications on it.
var ErrNoDesktop = errors.New("platform: no desktop notification service in this session")

// notifyTimeoutMS is how long the notification stays up (0 would mean
// until dismissed, which some servers ignore).
const notifyTimeoutMS = 120_000

// Desktop is a connection to the desktop's notification service.
type Desktop struct{ conn *dbus.Conn }

// OpenDesktop connects to the session bus named by
// $DBUS_SESSION_BUS_ADDRESS and checks that a notification service owns
// org.freedesktop.Notifications there. It returns an error wrapping
// ErrNoDesktop when there is no graphical session. The connection lives
// until Close or until ctx ends, whichever is first: ctx bounds every step.
func OpenDesktop(ctx context.Context) (*Desktop, error) {
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		return nil, fmt.Errorf("%w: DBUS_SESSION_BUS_ADDRESS is not set", ErrNoDesktop)
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("%w: session bus: %v", ErrNoDesktop, err)
	}
	var owned bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, notificationsName).Store(&owned); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: session bus: %v", ErrNoDesktop, err)
	}
	if !owned {
		conn.Close()
		return nil, fmt.Errorf("%w: nobody owns %s", ErrNoDesktop, notificationsName)
	}
	return &Desktop{conn: conn}, nil
}

// Notify shows summary and body as one notification.
func (d *Desktop) Notify(ctx context.Context, summary, body string) error {
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2))} // critical: stays until seen
	var id uint32
	err := d.conn.Object(notificationsName, notificationsPath).CallWithContext(ctx, notificationsNotify, 0,
		"webcodex", uint32(0), "dialog-password", summary, body, []string{}, hints, int32(notifyTimeoutMS)).Store(&id)
	if err != nil {
		return fmt.Errorf("platform: desktop notification: %w", err)
	}
	return nil
}

// Close closes the connection.
func (d *Desktop) Close() error { return d.conn.Close() }
