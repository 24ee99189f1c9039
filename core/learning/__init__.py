"""What runs teach: reflection after a run, the lessons pool, the retry that follows.

The face of the wing: lessons and what a finished run leaves behind.
"""

from core.learning.after_run import learn_from_run, lessons_for_request
from core.learning.lessons import Lesson, LessonBook

__all__ = ["Lesson", "LessonBook", "learn_from_run", "lessons_for_request"]
