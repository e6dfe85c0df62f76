"""The whole table in one command: ``studtable demo``.

Theory of operation
-------------------
``TableStack`` starts every part of a table the way a cardroom runs it, each
talking to the others only over MQTT and the shoe's serial link:

    embedded amqtt broker (generated users and ACL, loopback, a temp dir)
    engine service (SQLite store in the temp dir; a thread, or a real
        ``studtable engine`` process for the crash drills)
    shoe simulator on a pseudo-terminal  --serial frames-->  shoe bridge
        (``firmware_bridge``: framing, ACKs, de-duplication, BusPublisher)
    a console-role client (the simulated dealer's touch screen) and a
        recorder-role client (the finished hands, for the check)

``SimulatedTable`` is the people at the table.  It reads only what a console
may read (``public/state`` and ``dealer/prompt``) and does what the state asks:
when the state says a card is due (``next_deal``) the dealer draws the next
card from the simulated shoe (a real serial frame through the bridge); when a
player is to act, that player picks one of the legal options the state lists
(random, weighted like ``engine.simulate``, deterministic from the seed) and
the dealer enters it as a console ``action``; at showdown the dealer enters
each shown hand (``show``); when a prompt opens the dealer rules on it.  It
never looks inside the engine.

Meanwhile it writes down the simulated truth: every card as it left the shoe
and where the dealer put it, every action entered, every hand shown.  When a
hand's record arrives on ``history/hand`` (the recorder role), the record is
replayed through the engine's own ``Hand`` and compared with the truth: the
same cards to the same seats face up or down in the same order, the same
burns and set-aside cards, the same actions, the hands shown as dealt, the
hand complete and every chip accounted for.  ``run_demo`` returns a summary
and ``ok`` only if every hand passed.

Drills (``--drill``) make one thing go wrong mid-hand, on purpose:

``shoe-cable``      the shoe's USB cable is pulled (the pty closes) while a card
                    is due; the dealer draws it anyway; the console sees the
                    shoe go offline; the cable goes back in; the card, kept in
                    the shoe, arrives once; the dealer acknowledges the prompt.
``broker-restart``  the embedded broker is stopped and started again mid-hand;
                    every client reconnects; play resumes; nothing is lost.
``premature-card``  the dealer draws a card while betting is open; the engine
                    raises ``stud.premature-card``; the dealer confirms the
                    ruling; after the round one card per active player is set
                    aside before the burn (RRoP stud 14).
``engine-kill``     the engine runs as its own process and is killed with
                    SIGKILL mid-hand, a card is drawn while it is dead, it is
                    started again, replays its store and the hand goes on.

``exposed-holecard``  the dealer deals a seat's first hole card face up; the shoe says it went
                    down, only the camera sees it face up; ``stud.exposed-holecard`` (RRoP
                    stud 5): it plays as the up card and the seat's other cards come down.
``card-off-table``  the first hole card flies off the felt onto the rail; the camera reports it
                    off the felt; ``stud.card-off-table`` (RRoP stud 11): it plays as exposed.
``camera-stall``    the camera stops delivering frames mid-hand; the vision service's frame
                    watchdog says offline; the engine prompts ``source.offline``; the hand goes
                    on with the shoe; frames return a street later and the camera catches up.

The camera (``demo.camera``): ``vision.camera_sim.TableCamera`` draws the felt as the dealer
lays each card (a fixed camera pose, real Aisleriot art, fresh sensor noise every frame), and
the production vision pipeline reads those frames in its own process (enrolled deck,
calibration from the printed markers, ``Detector``, ``Tracker``, ``VisionCore``) and publishes
on the bus as ``cam-1``.  At the end of every hand the service's stable view is compared with
what lies on the felt; the summary reports it (a camera misread is reported, not a failed hand:
the shoe is the deal's source of truth).  With ``processes`` the engine and the shoe bridge run
as ``studtable engine`` and ``studtable bridge`` processes too.

The package: ``options`` (DemoOptions, the names), ``stack`` (the parts and their life cycle),
``people`` (the simulated dealer and players, who act only through the console's widgets, by
their accessible names: ``dealer_console.driver``), ``drills``, ``shift`` (``DemoOptions(shift=True)``:
seats taken and left, a refused buy-in and a game change between hands, on the console's pages), ``truth`` (the check), ``camera``
(the simulated camera and the vision service reading it), ``run`` (headless and with windows).
Nothing outside this package and its tests imports it: it is the composition root.
"""

from __future__ import annotations

from dealer_console.demo.options import DRILLS, NAMES, DemoError, DemoOptions
from dealer_console.demo.people import HandTruth, SimulatedTable, latency_summary
from dealer_console.demo.run import display_available, run_demo, run_gui, summary
from dealer_console.demo.stack import TableStack, TableWatch, embedded_broker, signature

__all__ = ["DRILLS", "NAMES", "DemoError", "DemoOptions", "HandTruth", "SimulatedTable", "TableStack", "TableWatch",
           "display_available", "embedded_broker", "latency_summary", "run_demo", "run_gui", "signature", "summary"]
