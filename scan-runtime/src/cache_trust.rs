//! Whom the disk cache believes: the rules that decide whether a cache directory and an entry
//! in it may be loaded.
//!
//! A cached kernel is machine code that the runtime launches and whose results it returns as
//! the scan. An entry's sha256 only proves it is intact; whoever can write the directory can
//! write an intact entry that computes something else. So by default the cache loads only from
//! a directory and files that **you** own (or root, who could replace scangen itself) and that
//! neither your group nor others can write: the rule ssh applies to `~/.ssh` and ccache to its
//! directory. Anything else is reported once and compiled as on a miss.
//!
//! A cache shared on purpose (a group directory on a cluster) is an explicit choice:
//! `SCANGEN_CACHE_SHARED=1` or [`CacheTrust::Shared`]. Then ownership and permissions are not
//! checked, and every writer of the directory is trusted like your own account.

use std::ffi::OsStr;

/// The environment variable that opts into a shared cache.
pub const SHARED_ENV: &str = "SCANGEN_CACHE_SHARED";

/// Which cache directories and entries the cache loads from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheTrust {
    /// Only a directory and entries owned by the current user (or root) that group and others
    /// cannot write. New directories are created 0700, new entries 0600.
    #[default]
    OwnerOnly,
    /// Whatever the directory holds, whoever wrote it: anyone who can write the directory can
    /// make your scans compute wrong results. New directories and entries get the umask's
    /// permissions, so the group that shares them can read them.
    Shared,
}

impl CacheTrust {
    /// The trust `SCANGEN_CACHE_SHARED` asks for: unset, empty or `0` is [`CacheTrust::OwnerOnly`],
    /// `1` is [`CacheTrust::Shared`]; anything else is an error that names the accepted values
    /// (the caller warns and stays private: a typo must not open the cache).
    pub fn from_env_value(value: Option<&OsStr>) -> Result<CacheTrust, String> {
        match value.map(|v| v.to_str()) {
            None => Ok(CacheTrust::OwnerOnly),
            Some(Some("" | "0")) => Ok(CacheTrust::OwnerOnly),
            Some(Some("1")) => Ok(CacheTrust::Shared),
            Some(other) => Err(format!(
                "{SHARED_ENV}={} is not understood (use 1 to share the kernel cache, 0 or unset to keep it private); keeping it private",
                other.map_or_else(|| "<not UTF-8>".to_string(), |s| format!("{s:?}"))
            )),
        }
    }
}

/// Who owns a directory or file, and its permission bits, as `stat` reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ownership {
    /// The owner's user id.
    pub uid: u32,
    /// `st_mode`: the permission bits (and the file type bits, which [`judge`] ignores).
    pub mode: u32,
}

/// Why a directory or entry is not trusted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    /// Owned by another user than the current one and root.
    #[error("it is owned by uid {owner}, not by you (uid {me})")]
    NotOwned {
        /// The owner's user id.
        owner: u32,
        /// The current (effective) user id.
        me: u32,
    },
    /// The group or other users can write it.
    #[error("{who} can write it (mode {mode:04o})")]
    Writable {
        /// Who can write it: `"your group"`, `"every user"` or both.
        who: &'static str,
        /// Its permission bits (`mode & 0o7777`).
        mode: u32,
    },
    /// An entry that is a symbolic link, which is never followed (its target could be anyone's
    /// file).
    #[error("it is a symbolic link")]
    Symlink,
    /// An entry that is not a regular file (a directory, a FIFO, a device).

    #[error("it is not a regular file")]
    NotRegular,
}

/// Trusted when owned by `me` or by root, and writable by neither group nor others.
pub fn judge(found: Ownership, me: u32) -> Result<(), Untrusted> {
    if found.uid != me && found.uid != 0 {
        return Err(Untrusted::NotOwned {
            owner: found.uid,
            me,
        });
    }
    let who = match (found.mode & 0o020 != 0, found.mode & 0o002 != 0) {
        (false, false) => return Ok(()),
        (true, false) => "your group",
        (false, true) => "every user",
        (true, true) => "your group and every user",
    };
    Err(Untrusted::Writable {
        who,
        mode: found.mode & 0o7777,
    })
}

/// How to fix an untrusted cache directory `dir`, for the warning.
pub fn dir_fix(why: &Untrusted, dir: &std::path::Path) -> String {
    let own = match why {
        Untrusted::Writable { .. } => format!("run `chmod go-w {}`", dir.display()),
        _ => "point SCANGEN_CACHE_DIR at a directory of your own".to_string(),
    };
    format!(
        "{own}, or set {SHARED_ENV}=1 if you trust everyone who can write it (see the README's threat model)"
    )
}

#[cfg(unix)]
mod imp {
    use super::{judge, Ownership, Untrusted};
    use std::fs::{File, Metadata, OpenOptions};
    use std::io;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    use std::path::Path;

    fn current_uid() -> u32 {
        // SAFETY: geteuid takes no arguments, cannot fail and touches no memory of ours.
        unsafe { libc::geteuid() }
    }

    fn ownership(meta: &Metadata) -> Ownership {
        Ownership {
            uid: meta.uid(),
            mode: meta.mode(),
        }
    }

    /// Whether a directory's (or an open entry's) metadata passes [`judge`].
    pub fn check(meta: &Metadata) -> Result<(), Untrusted> {
        judge(ownership(meta), current_uid())
    }

    /// Creates `dir` and missing parents; `private`: with mode 0700 (existing ones are left as
    /// they are, and checked by the caller).
    pub fn create_dir(dir: &Path, private: bool) -> io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        if private {
            builder.mode(0o700);
        }
        builder.create(dir)
    }

    /// Creates a new file for an entry; `private`: mode 0600, whatever the umask allows beyond.
    pub fn create_entry(path: &Path, private: bool) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        if private {
            options.mode(0o600);
        }
        options.open(path)
    }

    /// Opens an entry for reading without following a symbolic link in its last component and
    /// without blocking on a FIFO someone put there: the checks that follow (`metadata` of the
    /// open file) then describe exactly the file that is read.
    pub fn open_entry(path: &Path) -> Result<File, OpenError> {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => OpenError::Untrusted(Untrusted::Symlink),
                _ => OpenError::Io(e),
            })
    }

    pub enum OpenError {
        Untrusted(Untrusted),
        Io(io::Error),
    }
}

/// Elsewhere ownership is ACLs, not mode bits; the per-user cache directory of the platform is
/// relied on instead, and nothing is checked.
#[cfg(not(unix))]
mod imp {
    use super::Untrusted;
    use std::fs::{File, Metadata, OpenOptions};
    use std::io;
    use std::path::Path;

    pub fn check(_meta: &Metadata) -> Result<(), Untrusted> {
        Ok(())
    }

    pub fn create_dir(dir: &Path, _private: bool) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    pub fn create_entry(path: &Path, _private: bool) -> io::Result<File> {
        OpenOptions::new().write(true).create_new(true).open(path)
    }

    pub fn open_entry(path: &Path) -> Result<File, OpenError> {
        File::open(path).map_err(OpenError::Io)
    }

    pub enum OpenError {
        Untrusted(Untrusted),
        Io(io::Error),
    }
}

pub use imp::{check, create_dir, create_entry, open_entry, OpenError};

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    fn owned(uid: u32, mode: u32) -> Result<(), Untrusted> {
        judge(Ownership { uid, mode }, ME)
    }

    #[test]
    fn yours_and_closed_is_trusted() {
        assert_eq!(owned(ME, 0o40700), Ok(()));
        assert_eq!(owned(ME, 0o100600), Ok(()));
        // Readable by others is fine: reading cannot plant a kernel.
        assert_eq!(owned(ME, 0o40755), Ok(()));
    }

    #[test]
    fn roots_is_trusted() {
        // A read-only system cache prepared by root: root could replace scangen itself.
        assert_eq!(owned(0, 0o40755), Ok(()));
        assert!(owned(0, 0o40777).is_err());
    }

    #[test]
    fn someone_elses_is_not() {
        assert_eq!(
            owned(1001, 0o40700),
            Err(Untrusted::NotOwned {
                owner: 1001,
                me: ME
            })
        );
    }

    #[test]
    fn group_or_world_writable_is_not() {
        let who = |mode| match owned(ME, mode) {
            Err(Untrusted::Writable { who, .. }) => who,
            other => panic!("{mode:o}: {other:?}"),
        };
        assert_eq!(who(0o40770), "your group");
        assert_eq!(who(0o40702), "every user");
        assert_eq!(who(0o41777), "your group and every user");
        assert_eq!(
            owned(ME, 0o100664).unwrap_err().to_string(),
            "your group can write it (mode 0664)"
        );
    }

    #[test]
    fn the_opt_in_is_explicit() {
        let parse = |v: Option<&str>| CacheTrust::from_env_value(v.map(OsStr::new));
        assert_eq!(parse(None), Ok(CacheTrust::OwnerOnly));
        assert_eq!(parse(Some("")), Ok(CacheTrust::OwnerOnly));
        assert_eq!(parse(Some("0")), Ok(CacheTrust::OwnerOnly));
        assert_eq!(parse(Some("1")), Ok(CacheTrust::Shared));
        for typo in ["yes", "true", " 1", "shared"] {
            let err = parse(Some(typo)).unwrap_err();
            assert!(
                err.contains(&format!("{typo:?}")) && err.contains("keeping it private"),
                "{err}"
            );
        }
    }
}
