//! A family's part of the man page (`autorepair --generate man`): the face writes the page
//! from the command line and its own text, and takes each family's part from
//! [`FamilyFace::MAN`](super::FamilyFace::MAN), family by family in the order they are
//! registered.
//!
//! Every text is roff, written with a plain "-" and "'": the face escapes them so that the
//! options copy and paste correctly. A line break inside a text is a space to roff, so a
//! fragment may break where it likes; the face joins the fragments of the families with the
//! separators named on each field.

/// One family's text on the man page. Every field may be empty (the family says nothing
/// there).
#[derive(Debug, Clone, Copy)]
pub struct ManPage {
    /// The scopes above the family's targets, for the description's first sentence
    /// ("Ganeti node groups and the cluster"); joined with "; ".
    pub scopes: &'static str,
    /// The marks the family keeps its state in ("Ganeti tags"); joined with ", ".
    pub marks: &'static str,
    /// Where its fleet comes from: `.TP` items of the description's list of sources, one per
    /// flag or file it reads.
    pub sources: &'static str,
    /// The objects its admin commands name, as one or more sentences that start with the
    /// family's name ("Ganeti: \fBcluster\fR, …."); joined with " ".
    pub objects: &'static str,
    /// Its repair levels, least destructive first, after the family's name
    /// ("Ganeti \fBfix-storage\fR, …"); joined with "; ".
    pub ladder: &'static str,
    /// What steers it beyond the marks every family has, as sentences after the description's
    /// paragraph on the admin commands ("Ganeti's marks are its tags, …"); joined with a line
    /// break.
    pub steering: &'static str,
    /// How it runs beside its fleet's own tools and how its replicas elect the one that acts,
    /// as sentences that start with the family's name ("metal3: replicas elect with a
    /// Kubernetes Lease …"); joined with a line break.
    pub replicas: &'static str,
    /// The path of its lock when no lock is named and the fleet is no file, for the tag of
    /// FILES' lock item (\fB/run/lock/autorepair-kube.lock\fR); joined with ", ".
    pub lock_path: &'static str,
    /// How that lock is named, as a clause of FILES' lock item ("for a sabakan server, after
    /// the host and port of its URL"); joined with "; ".
    pub lock: &'static str,
    /// What it adds to the description of a config key of the face's (`limits.retries`), as
    /// sentences placed after it.
    pub notes: &'static [(&'static str, &'static str)],
    /// Its own sections, each whole from its `.SH` line, placed after the commands.
    pub sections: &'static [&'static str],
    /// Its config keys, dotted (`rapi.url`), each with its description, in the order the
    /// page lists them (under CONFIGURATION, with the default the code gives). Every key of
    /// its config must be here, and nothing else.
    pub config_keys: &'static [(&'static str, &'static str)],
    /// Its environment variables: `.TP` items of ENVIRONMENT.
    pub environment: &'static str,
    /// Its files: `.TP` items of FILES.
    pub files: &'static str,
    /// Its examples: paragraphs of EXAMPLES. Every command line in them must parse.
    pub examples: &'static str,
    /// The pages of its tools, as (name, section), for SEE ALSO.
    pub see_also: &'static [(&'static str, &'static str)],
}

impl ManPage {
    /// A family that says nothing of its own on the page.
    pub const NONE: ManPage = ManPage {
        scopes: "",
        marks: "",
        sources: "",
        objects: "",
        ladder: "",
        steering: "",
        replicas: "",
        lock_path: "",
        lock: "",
        notes: &[],
        sections: &[],
        config_keys: &[],
        environment: "",
        files: "",
        examples: "",
        see_also: &[],
    };

    /// Every piece of text, for the checks that read them all (the options they name exist).
    pub fn texts(&self) -> Vec<&'static str> {
        let mut all = vec![
            self.scopes,
            self.marks,
            self.sources,
            self.objects,
            self.ladder,
            self.steering,
            self.replicas,
            self.lock_path,
            self.lock,
            self.environment,
            self.files,
            self.examples,
        ];
        all.extend(self.sections.iter().copied());
        all.extend(self.config_keys.iter().map(|(_, text)| *text));
        all.extend(self.notes.iter().map(|(_, text)| *text));
        all
    }
}
